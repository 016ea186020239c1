/// Why a feed document could not be parsed. `message` is a sentence meant for the user
/// (it is what `offlinefs source list` shows for the source).
public struct FeedError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, Equatable, CaseIterable {
        /// Bigger than `FeedLimits.maxDocumentBytes`.
        case tooLarge
        /// Not well-formed XML or JSON, truncated, or empty.
        case malformed
        /// Well-formed but not a feed offlinefs reads (an HTML page, an unknown catalog version).
        case unsupported
        /// JSON nested deeper than `FeedLimits.maxJSONDepth`.
        case tooDeep
        /// More items than `FeedLimits.maxItems`.
        case tooManyItems
        /// Parsing took longer than `FeedLimits.deadline`.
        case deadline
        /// An XML document type with an internal subset or entity declarations.
        case forbiddenDoctype
        /// A lookup document whose single item is unusable (no id, no allowed media URL …).
        case invalidItem
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
