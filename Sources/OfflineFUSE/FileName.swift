/// A name inside a directory, copied out of a request as the kernel sent it.
///
/// The kernel passes raw bytes: a user may type a name that is not valid UTF-8. Decoding it
/// leniently could turn it into a different, existing name (U+FFFD), so the bytes are kept and
/// `string` is `nil` when they are not valid UTF-8.
public struct FileName: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The name's bytes, without a terminating NUL.
    public let bytes: [UInt8]

    public init(bytes: [UInt8]) { self.bytes = bytes }
    public init(_ string: String) { self.bytes = Array(string.utf8) }
    public init(stringLiteral value: String) { self.init(value) }

    /// Copies a C string (a request argument, valid only during the callback).
    init(cString: UnsafePointer<CChar>) {
        self.bytes = cString.withMemoryRebound(to: UInt8.self, capacity: 1) { start in
            var count = 0
            while start[count] != 0 { count += 1 }
            return Array(UnsafeBufferPointer(start: start, count: count))
        }
    }

    /// The name as a string, or `nil` when its bytes are not valid UTF-8.
    public var string: String? { String(validating: bytes, as: UTF8.self) }

    /// `.` or `..`: the kernel keeps no lookup count for them.
    public var isDotOrDotDot: Bool { bytes == [0x2E] || bytes == [0x2E, 0x2E] }

    public var description: String { String(decoding: bytes, as: UTF8.self) }
}
