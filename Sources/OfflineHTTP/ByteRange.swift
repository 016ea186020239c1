/// A half-open byte range `[start, end)` of a remote file.
public struct ByteRange: Sendable, Hashable, CustomStringConvertible {
    public var start: Int64
    public var end: Int64

    public init(_ start: Int64, _ end: Int64) {
        precondition(start >= 0 && end >= start, "invalid byte range \(start)..<\(end)")
        self.start = start
        self.end = end
    }

    public var count: Int64 { end - start }
    public var isEmpty: Bool { start == end }

    /// The value of a `Range` request header (`bytes=a-b`, inclusive end).
    public var headerValue: String { "bytes=\(start)-\(end - 1)" }

    public var description: String { "[\(start), \(end))" }
}
