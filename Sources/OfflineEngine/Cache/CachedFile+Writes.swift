import Dispatch
import OfflineHTTP
import OfflineStore
import Synchronization

/// The writing side of `CachedFile`: arriving bytes gathered in staging blocks, blocks
/// written out (past the page cache when full), and the flush that makes written bytes
/// durable and claims them in the store. Readers never wait on a flush.
extension CachedFile {
    /// Copies arriving bytes into the fetch's staging blocks, writing each block out as it
    /// fills, and returns how many it took. With no block free, it makes room by letting go of
    /// this file's oldest block whose bytes are all in the file; failing that, it stops (fewer
    /// bytes taken) while a block of this file is on its way to the disk, whose write then
    /// resumes the fetch (`writeOut`): the origin is held back rather than the bytes written
    /// through the page cache, which costs more than the disk. Else it writes them the plain way.
    func stage(_ id: Int, _ bytes: UnsafeRawBufferPointer, at offset: Int64, generation: Int) throws(CacheFileError) -> Int {
        var done = 0
        while done < bytes.count {
            let position = offset + Int64(done)
            var block = state.withLock { s in s.fetches[id]?.block }
            if block.map({ $0.start + Int64($0.to) != position || $0.to == StagingBlock.size }) ?? true {
                if let stale = block, !stale.isWhollyWritten { guard writeOut(stale) else { return done } }
                block = staging?.block(for: position, generation: generation)
                if block == nil, state.withLock({ $0.dropOldestSettledBlock() }) {
                    block = staging?.block(for: position, generation: generation)
                }
                let waitForWrite = state.withLock { s in
                    s.fetches[id]?.block = block
                    if let block { s.keep(block) }
                    return block == nil && s.isWritingBlocks
                }
                if waitForWrite { return done }
            }
            guard let block else {
                let rest = UnsafeRawBufferPointer(rebasing: bytes[done...])
                try file.write(rest, at: position)
                record(position..<(position + Int64(rest.count)), generation: generation)
                return bytes.count
            }
            let count = min(bytes.count - done, StagingBlock.size - block.to)
            (block.memory + block.to).copyMemory(from: bytes.baseAddress! + done, byteCount: count)
            state.withLock { _ in block.to += count }
            done += count
            if block.to == StagingBlock.size {
                state.withLock { s in
                    if s.fetches[id]?.block === block { s.fetches[id]?.block = nil }
                }
                // On a thread of its own, so the transfer receives while the disk writes.
                if let blockWrites {
                    blockWrites.async { [self] in writeOut(block, direct: true) }
                } else {
                    guard writeOut(block, direct: true) else { return done }
                }
            }
        }
        return done
    }

    /// Writes the block's bytes that are not in the file yet, then counts them as present.
    /// With `direct` (a full block), the whole pages among them go past the page cache
    /// (`O_DIRECT`) and the pages at either end the plain way (another fetch may own the rest
    /// of such a page). Without (a block written early: its fetch ended, a reader or a flush
    /// wants its bytes), all go the plain way, which returns before the disk has them: the
    /// reader waiting on them, or the next open that finds the file whole, is not held up by it.
    ///
    /// Threads may write out one block at once (the transfer's, a reader's, the flusher's):
    /// each writes the bytes it found unwritten, which never change, so a range two of them
    /// write holds the same bytes either way; each counts as present only what it wrote.
    /// Any thread; returns false after a failed write (the file then takes no more bytes).
    @discardableResult
    func writeOut(_ block: StagingBlock, direct wholePages: Bool = false) -> Bool {
        let pending = state.withLock { s -> Range<Int>? in
            guard s.generation == block.generation, s.writeError == nil, block.written < block.to else { return nil }
            return block.written..<block.to
        }
        guard let pending else { return true }
        do throws(CacheFileError) {
            try write(block, pending, wholePages: wholePages)
        } catch {
            failWrites(Self.writeFailure(error, path: file.path))
            return false
        }
        // Present in the same step as written: a flush that finds nothing left to write out
        // finds these bytes unflushed.
        let (ready, flushAfter, resumed) = state.withLock { s in
            block.written = max(block.written, pending.upperBound)
            let (ready, flushAfter) = s.noteWritten((block.start + Int64(pending.lowerBound))..<(block.start + Int64(pending.upperBound)),
                                                    generation: block.generation, settings: settings)
            return (ready, flushAfter, s.resumeFetchesWaitingForBlocks())
        }
        // Waiters are answered outside the lock: their completions may call in.
        announce((ready, flushAfter))
        resumed.forEach(loop.resume)
        return true
    }

    /// Writes `pending` bytes of `block`: with `wholePages`, its whole pages past the page
    /// cache and the rest the plain way.
    private func write(_ block: StagingBlock, _ pending: Range<Int>, wholePages: Bool) throws(CacheFileError) {
        let alignment = StagingBlock.alignment
        let first = (pending.lowerBound + alignment - 1) / alignment * alignment
        let last = pending.upperBound / alignment * alignment
        var direct = false
        if wholePages && first < last {
            direct = try file.writeDirect(UnsafeRawBufferPointer(start: block.memory + first, count: last - first),
                                          at: block.start + Int64(first))
        }
        let plain = direct ? [pending.lowerBound..<first, last..<pending.upperBound] : [pending]
        for part in plain where !part.isEmpty {
            try file.write(UnsafeRawBufferPointer(start: block.memory + part.lowerBound, count: part.count),
                           at: block.start + Int64(part.lowerBound))
        }
    }

    /// Writes out every block's bytes not in the file yet (before a flush): those gathering
    /// for a fetch now, and full ones queued for their own write are waited for.
    func writeOutStaged() {
        let unwritten = state.withLock { s in s.recent.filter { !$0.isWhollyWritten } }
        guard let blockWrites else {
            for block in unwritten { writeOut(block) }
            return
        }
        // A full block is queued for its own write; written the plain way here, it would go
        // through the page cache that the queued write is there to avoid.
        for block in unwritten where block.to < StagingBlock.size { writeOut(block) }
        if unwritten.contains(where: { $0.to == StagingBlock.size }) { blockWrites.sync {} }
    }

    /// Bytes of `generation` reached the file: they are present, waiters they complete are
    /// answered, and a flush is scheduled.
    private func record(_ written: Range<Int64>, generation: Int) {
        let news = state.withLock { s in s.noteWritten(written, generation: generation, settings: settings) }
        announce(news)
    }

    /// Answers the waiters that bytes now in the file complete, and schedules the flush they
    /// call for (`CachedFileState.noteWritten`). No lock held.
    private func announce(_ news: (ready: [Waiter], flushAfter: Duration?)) {
        // Readers first: scheduling a flush may start the flusher's thread.
        for waiter in news.ready { waiter.completion(.success(())) }
        if let flushAfter = news.flushAfter { flusher.schedule(self, after: flushAfter) }
    }

    // MARK: - Durability

    /// Flushes every byte written so far and claims it in the store. Blocking (fdatasync and a
    /// commit): flusher thread or a download's thread only. Returns the sticky write error.
    @discardableResult
    func flush() -> FetchError? {
        Self.flush([self])[0]
    }

    /// Bytes stay in the page cache for this many flushes after their own (a flush comes every
    /// `FetchSettings.flushBytes`, 16 MiB, while bytes stream in), then the kernel is told to
    /// drop them: by then a sequential reader, at most its read-ahead (8 MiB) behind the
    /// newest bytes, has read them. The freed pages are what the next bytes are written into.
    /// On a virtual machine that gives freed memory back to its host, writing into pages never
    /// touched before costs a fault in the host for each page (seen here: the cache file's
    /// writes took half of a cold read's CPU); pages recycled within the stream cost nothing
    /// of the kind. A reader further behind reads those bytes from the disk.
    static let flushesKeptInMemory = 2

    /// The bytes of the last `flushesKeptInMemory` flushes: a reader at the edge of the stream
    /// reads them next.
    var recentlyFlushedRanges: [Range<Int64>] {
        state.withLock { $0.recentlyFlushed.flatMap { $0 } }
    }

    /// Flushes several files: each file's bytes are `fdatasync`ed, then one store transaction
    /// per index claims them (one WAL sync for a batch of small HLS segments instead of one
    /// each). A file's claims go through its own index only. Returns each file's sticky write
    /// error, in order.
    static func flush(_ files: [CachedFile]) -> [FetchError?] {
        var positions: [ObjectIdentifier: [Int]] = [:]
        for (position, file) in files.enumerated() { positions[ObjectIdentifier(file.index), default: []].append(position) }
        var errors = [FetchError?](repeating: nil, count: files.count)
        for group in positions.values {
            let batch = group.map { files[$0] }
            for (position, error) in zip(group, flush(batch, through: batch[0].index)) { errors[position] = error }
        }
        return errors
    }

    /// `flush(_:)` of files that share `index`. Every file's `commitLock` is held throughout,
    /// taken in one global order (no path holds one while waiting for another), so no claim
    /// lands after a reset that made its bytes stale.
    private static func flush(_ files: [CachedFile], through index: any CacheIndex) -> [FetchError?] {
        // Bytes still gathering in a block go to the file first, so a slow origin's bytes are
        // claimed (and survive a crash) as often as before staging (before the commit locks:
        // writing them out answers waiters).
        for file in files { file.writeOutStaged() }
        struct Outcome {
            var error: FetchError?
            var isNew = false
            var completed = false
        }
        var outcomes = [Outcome](repeating: Outcome(), count: files.count)
        CachedFile.withCommitLocks(of: files) {
            var pending: [(file: Int, commit: CacheCommit)] = []
            for (position, file) in files.enumerated() {
                let snapshot = file.state.withLock { s -> (ranges: [Range<Int64>], validator: CacheValidator?)? in
                    s.flushScheduled = false
                    s.urgentFlushScheduled = false
                    guard !s.unflushed.isEmpty, s.writeError == nil else { return nil }
                    defer { s.unflushed = RangeSet(); s.unflushedBytes = 0 }
                    var validator = s.validator ?? CacheValidator()
                    if validator.totalSize == nil { validator.totalSize = s.total }
                    return (s.unflushed.ranges, validator)
                }
                guard let snapshot else {
                    outcomes[position].error = file.state.withLock { $0.writeError }
                    continue
                }
                do {
                    try file.file.sync()
                    pending.append((position, CacheCommit(itemID: file.itemID, file: file.key, ranges: snapshot.ranges,
                                                          validator: snapshot.validator,
                                                          url: CacheLayout.isSideFile(file.key) ? file.origin.url : nil)))
                } catch {
                    outcomes[position] = Outcome(error: writeFailure(error, path: file.file.path), isNew: true)
                }
            }
            guard !pending.isEmpty else { return }
            do {
                let skipped = try index.commit(pending.map(\.commit))
                for (n, entry) in pending.enumerated() {
                    let file = files[entry.file]
                    guard !skipped.contains(n) else {
                        outcomes[entry.file] = Outcome(error: FetchError(.noSuchItem, "item \(file.itemID) no longer exists"),
                                                       isNew: true)
                        continue
                    }
                    let (completed, behind) = file.state.withLock { s -> (Bool, [Range<Int64>]) in
                        for range in entry.commit.ranges { s.committed.insert(range) }
                        s.recentlyFlushed.append(entry.commit.ranges)
                        let behind = s.recentlyFlushed.count > Self.flushesKeptInMemory ? s.recentlyFlushed.removeFirst() : []
                        return (s.total.map { s.committed.contains(0..<$0) } ?? false, behind)
                    }
                    outcomes[entry.file].completed = completed
                    file.file.releaseCachedPages(behind)
                }
            } catch {
                for entry in pending {
                    outcomes[entry.file] = Outcome(error: writeFailure(error, path: files[entry.file].file.path), isNew: true)
                }
            }
        }

        // Waiters are failed and completions run after the commit locks are released: a
        // completion may call back in.
        for (position, file) in files.enumerated() {
            if let error = outcomes[position].error, outcomes[position].isNew { file.failWrites(error) }
            if outcomes[position].completed { file.onCompletelyCommitted(file) }
        }
        return outcomes.map(\.error)
    }

    /// A write or flush failed: unflushed bytes are no longer trusted, waiters fail, and
    /// nothing more is written.
    ///
    /// Out of descriptors, only the fetches and waiters fail: what is in the file is good, and
    /// the next request may find a descriptor free (the bytes that could not go are dropped).
    /// On a full disk the file then recovers by itself (`recoverFromWriteFailure`): what it
    /// wrote and could not claim goes back, and the next read or download tries again without
    /// a remount, whoever's fetch met the full disk.
    func failWrites(_ failure: FetchError) {
        let sticky = failure.reason != .outOfDescriptors
        end(state.withLock { s in
            if sticky {
                s.writeError = s.writeError ?? failure
                s.present = s.committed
                s.recent = []
                s.unflushed = RangeSet()
                s.unflushedBytes = 0
            } else {
                s.recent.removeAll { !$0.isWhollyWritten }
            }
            return s.endAll(failure)
        }, failure)
        // Off this thread: a failed flush calls here with the commit locks held. The engine
        // evicts streamed items meanwhile, whoever's fetch met the full disk.
        if failure.reason == .noSpace {
            callbacks.async { [weak self] in self?.recoverFromWriteFailure() }
            file.room.ranOut()
        }
    }

    static func writeFailure(_ error: any Error, path: String) -> FetchError {
        if let error = error as? CacheFileError {
            let reason: FetchError.Reason? = error.isNoSpace ? .noSpace : error.isOutOfDescriptors ? .outOfDescriptors : nil
            return FetchError(.cacheWriteFailed, error.description, reason: reason)
        }
        // The store's commit failing for a full disk is the same shortage: recovered from
        // once space returns, not a file that fails until the mount restarts.
        return FetchError(.cacheWriteFailed, "cannot record cached bytes of \(path): \(error)",
                          reason: EngineError.meansDiskFull(error) ? .noSpace : nil)
    }
}
