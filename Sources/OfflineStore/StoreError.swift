import Foundation

/// An error from the library store: bad input (a source name, a policy value), a missing
/// record, or a database failure. `message` is written for the user; `underlying` keeps the
/// cause (usually an SQLite error) for logs.
public struct StoreError: Error, Sendable, CustomStringConvertible, LocalizedError {
    /// What went wrong, coarse enough for callers to branch on.
    public enum Code: String, Sendable, Hashable {
        /// A source name that cannot name a folder (empty, `/`, `.`, `..`, control characters, > 255 bytes).
        case invalidSourceName = "invalid-source-name"
        /// `addSource` with a name already in use.
        case duplicateSource = "duplicate-source"
        case unknownSource = "unknown-source"
        case unknownItem = "unknown-item"
        /// A policy name that is not one of `Policy.allCases`.
        case unknownPolicy = "unknown-policy"
        /// A policy value that does not parse; the message names the accepted forms.
        case invalidPolicyValue = "invalid-policy-value"
        /// `quick_check` failed or the file is not an SQLite database.
        case corruptDatabase = "corrupt-database"
        /// Any other SQLite or file-system failure.
        case databaseError = "database-error"
    }

    public var code: Code
    public var message: String
    public var underlying: (any Error & Sendable)?

    public init(_ code: Code, _ message: String, underlying: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    public var description: String {
        if let underlying { return "\(message) (\(underlying))" }
        return message
    }

    public var errorDescription: String? { description }
}
