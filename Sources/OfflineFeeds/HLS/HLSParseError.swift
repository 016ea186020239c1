/// Why a playlist could not be parsed. `message` is a sentence for the user that names the
/// problem and, when one line is at fault, starts with it: `line 12: EXTINF duration 'abc'
/// is not a number`.
public struct HLSParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, Equatable, CaseIterable {
        /// Over one of the `HLSLimits` (bytes, line length, segment, variant or rendition count).
        case tooLarge
        /// Not an HLS playlist, or a tag or attribute that breaks RFC 8216.
        case malformed
        /// A URI that is not `http`/`https` once resolved, or not a URI at all.
        case forbiddenURL
        /// Valid HLS the parser does not handle (an unknown key method).
        case unsupported
    }

    public var code: Code
    /// The 1-based line at fault; nil for the playlist as a whole.
    public var line: Int?
    public var message: String

    init(_ code: Code, line: Int?, _ reason: String) {
        self.code = code
        self.line = line
        self.message = line.map { "line \($0): \(reason)" } ?? reason
    }

    public var description: String { message }
}
