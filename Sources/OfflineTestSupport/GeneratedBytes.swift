import Foundation

/// Deterministic pseudo-random content that costs no memory: byte `i` of a resource is a pure
/// function of `(seed, i)`, so the origin can serve any range of a 1 GiB resource and a test
/// can compute the bytes (and their SHA-256) it expects, chunk by chunk.
///
/// The stream is made of little-endian 64-bit words; word `n` is SplitMix64's output for
/// `seed &+ (n &+ 1) &* 0x9E3779B97F4A7C15`. Any byte can be computed without the ones
/// before it, which is what range requests need.
public struct GeneratedBytes: Sendable, Hashable {
    /// Total length of the content in bytes.
    public var size: Int64
    /// The seed; two seeds give unrelated content.
    public var seed: UInt64

    public init(size: Int64, seed: UInt64) {
        precondition(size >= 0, "GeneratedBytes: negative size")
        self.size = size
        self.seed = seed
    }

    @inline(__always)
    static func word(seed: UInt64, index: UInt64) -> UInt64 {
        var z = seed &+ (index &+ 1) &* 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Fills `buffer` with the bytes starting at `offset` (the caller keeps the range inside
    /// `size`; bytes past the end are still well defined, simply not part of the content).
    public func fill(from offset: Int64, into buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        var position = 0
        var index = UInt64(offset) / 8
        var skip = Int(UInt64(offset) % 8)
        let count = buffer.count
        // Leading partial word (offset not aligned), then whole words, then the tail.
        while position < count {
            let value = Self.word(seed: seed, index: index).littleEndian
            if skip == 0 && count - position >= 8 {
                base.storeBytes(of: value, toByteOffset: position, as: UInt64.self)
                position += 8
            } else {
                withUnsafeBytes(of: value) { word in
                    var k = skip
                    while k < 8 && position < count {
                        base.storeBytes(of: word[k], toByteOffset: position, as: UInt8.self)
                        position += 1
                        k += 1
                    }
                }
                skip = 0
            }
            index += 1
        }
    }

    /// The bytes of `range` (clamped to the content) as one `Data`.
    public func bytes(in range: Range<Int64>? = nil) -> Data {
        let wanted = (range ?? 0..<size).clamped(to: 0..<size)
        var data = Data(count: Int(wanted.count))
        data.withUnsafeMutableBytes { fill(from: wanted.lowerBound, into: $0) }
        return data
    }

    /// Calls `body` with consecutive chunks of `range` (default: the whole content), each at
    /// most `chunkSize` bytes, reusing one buffer: hashing 1 GiB needs only one chunk of memory.
    public func forEachChunk(
        in range: Range<Int64>? = nil, chunkSize: Int = 1 << 20,
        _ body: (UnsafeRawBufferPointer) throws -> Void
    ) rethrows {
        let wanted = (range ?? 0..<size).clamped(to: 0..<size)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, chunkSize), alignment: 8)
        defer { buffer.deallocate() }
        var offset = wanted.lowerBound
        while offset < wanted.upperBound {
            let length = Int(min(Int64(buffer.count), wanted.upperBound - offset))
            let chunk = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<length])
            fill(from: offset, into: chunk)
            try body(UnsafeRawBufferPointer(chunk))
            offset += Int64(length)
        }
    }

    /// SHA-256 of `range` (default: the whole content), as lowercase hex.
    public func sha256Hex(in range: Range<Int64>? = nil) -> String {
        var hasher = SHA256Hasher()
        forEachChunk(in: range) { hasher.update($0) }
        return hasher.finalizeHex()
    }
}
