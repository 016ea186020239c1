/// Bytes of a cache file that are still in memory (in the staging blocks they arrived in), in
/// order. Holding a value keeps its blocks' memory: it may be passed to another thread and
/// read there (bytes that arrived never change).
public struct BytesInMemory: Sendable {
    let pieces: [(block: StagingBlock, bytes: Range<Int>)]

    /// How many bytes, in all.
    public var count: Int { pieces.reduce(0) { $0 + $1.bytes.count } }

    /// Calls `body` with the bytes, in one buffer per piece; the buffers are valid during `body` only.
    public func withBuffers<Result>(_ body: ([UnsafeRawBufferPointer]) throws -> Result) rethrows -> Result {
        try withExtendedLifetime(pieces) {
            try body(pieces.map { UnsafeRawBufferPointer(start: $0.block.memory + $0.bytes.lowerBound, count: $0.bytes.count) })
        }
    }
}
