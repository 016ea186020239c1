import Glibc
import Synchronization

/// One `size`-byte piece of a cache file, in memory: arriving bytes are copied here, the piece
/// goes to the disk in one write that bypasses the page cache (`O_DIRECT`) when it is full,
/// and it stays a while after that so readers of its bytes are answered from memory.
///
/// Why: writing a streamed file through the page cache cost a copy into new pages, ext4's
/// per-page bookkeeping and the flush's per-page write-back; on this two-core VM that was most
/// of a cold read's CPU in the mount (docs/transfers.md, "Staged writes").
///
/// `from..<to` (bytes relative to `start`) have arrived; `from..<written` are in the file.
/// All three are read and changed under the owning `CachedFile`'s state lock; only the thread
/// of the fetch that fills the block moves `to`, and only `CachedFile.writeOut` moves
/// `written`. Bytes below `to` never change again, so a reader may copy them (and a writer
/// write them) without the lock while it holds the block.
final class StagingBlock: @unchecked Sendable {
    static let size = 1 << 20
    /// `O_DIRECT` wants buffer, offset and length aligned to the logical block size; a page
    /// covers every disk this runs on.
    static let alignment = 4096

    let start: Int64
    let generation: Int
    let memory: UnsafeMutableRawPointer
    private let pool: StagingPool
    var from: Int
    var to: Int
    var written: Int

    fileprivate init(start: Int64, at offset: Int, generation: Int, memory: UnsafeMutableRawPointer, pool: StagingPool) {
        self.start = start
        self.generation = generation
        self.memory = memory
        self.pool = pool
        from = offset
        to = offset
        written = offset
    }

    deinit { pool.giveBack(memory) }

    /// The block that holds file offset `offset`.
    static func start(of offset: Int64) -> Int64 { offset - offset % Int64(size) }

    var isWhollyWritten: Bool { written == to }
    var arrived: Range<Int64> { (start + Int64(from))..<(start + Int64(to)) }
    var unwritten: Range<Int64> { (start + Int64(written))..<(start + Int64(to)) }
}

/// The memory of every staging block of one engine: never more than `capacity` blocks, so a
/// transfer's bytes are copied into pages already in use rather than new ones. Up to
/// `keptFree` blocks that come back stay for reuse (a stream takes a new block each MiB);
/// more go back to the system, so a mount that read much and now reads nothing does not
/// hold the pool. When it is used up, bytes go to the file the plain way (`pwrite` through
/// the page cache).
final class StagingPool: Sendable {
    /// A block's memory, handed between threads only through the pool's lock.
    private struct Memory: @unchecked Sendable {
        let pointer: UnsafeMutableRawPointer
    }
    private struct State {
        var free: [Memory] = []
        var allocated = 0
    }
    private let state = Mutex(State())  // leaf lock
    let capacity: Int
    static let keptFree = 4

    init(capacity: Int) {
        self.capacity = capacity
    }

    deinit {
        for memory in state.withLock({ $0.free }) { Self.unmap(memory.pointer) }
    }

    /// Page-aligned memory of its own mapping (`O_DIRECT` wants aligned buffers), which
    /// `munmap` gives back to the system whole.
    private static func map() -> UnsafeMutableRawPointer? {
        let pointer = mmap(nil, StagingBlock.size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        return pointer == MAP_FAILED ? nil : pointer
    }

    private static func unmap(_ pointer: UnsafeMutableRawPointer) {
        munmap(pointer, StagingBlock.size)
    }

    /// Maps a block and touches its pages, so that a mount's first read does not wait for a
    /// fresh mapping and its page faults. One block (1 MiB) is kept ready this way: the first
    /// one, which the free list hands out first.
    func prepareBlock() {
        guard let pointer = Self.map() else { return }
        memset(pointer, 0, StagingBlock.size)
        let kept = state.withLock { s -> Bool in
            guard s.allocated < capacity else { return false }
            s.allocated += 1
            s.free.append(Memory(pointer: pointer))
            return true
        }
        if !kept { Self.unmap(pointer) }
    }

    /// A block for the bytes from `offset` on, or nil when every block is in use.
    func block(for offset: Int64, generation: Int) -> StagingBlock? {
        let memory = state.withLock { s -> Memory? in
            if let reused = s.free.popLast() { return reused }
            guard s.allocated < capacity, let pointer = Self.map() else { return nil }
            s.allocated += 1
            return Memory(pointer: pointer)
        }
        guard let memory else { return nil }
        let start = StagingBlock.start(of: offset)
        return StagingBlock(start: start, at: Int(offset - start), generation: generation, memory: memory.pointer, pool: self)
    }

    fileprivate func giveBack(_ pointer: UnsafeMutableRawPointer) {
        let memory = Memory(pointer: pointer)
        let kept = state.withLock { s -> Bool in
            guard s.free.count < Self.keptFree else {
                s.allocated -= 1
                return false
            }
            s.free.append(memory)
            return true
        }
        if !kept { Self.unmap(pointer) }
    }

    /// Blocks in use or free (tests).
    var allocatedBlocks: Int { state.withLock { $0.allocated } }
}
