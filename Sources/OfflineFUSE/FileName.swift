#if canImport(Glibc)
import Glibc
#endif

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

    // Hashing and comparing the bytes in one go: the derived versions went a byte at a time,
    // which showed in building and looking up folders of 100,000 names.

    public func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    public static func == (lhs: FileName, rhs: FileName) -> Bool {
        lhs.bytes.count == rhs.bytes.count && lhs.bytes.withUnsafeBytes { left in
            rhs.bytes.withUnsafeBytes { right in left.count == 0 || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0 }
        }
    }
}
