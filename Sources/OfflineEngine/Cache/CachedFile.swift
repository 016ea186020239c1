import Dispatch
import Foundation
import OfflineHTTP
import OfflineStore
import Synchronization

/// One item file's cache: its sparse file, which bytes it holds, the range requests
/// filling it and the readers waiting on it. Three owners, a file each: the range map, its
/// waiters and the fetch planner (`CachedFileState`, pure bookkeeping under `state`); the
/// transfers (CachedFile+Transfers: requests, response heads, bodies); the writer
/// (CachedFile+Writes: staging blocks, `O_DIRECT`, flush and store commit).
///
/// Write order (HARDENING, SQLite): bytes → `fdatasync` → commit of the range map. Readers are
/// answered as soon as bytes are in the file (or from memory); only the claim waits for the flush.
/// A change of the origin's file (another validator or size) starts a new generation: the
/// store forgets the old ranges *before* any byte of the new version is written.
///
/// Two locks, in this order: `commitLock` → `state`. `state` guards the range map, the
/// fetches, the waiters and the staging blocks' marks; completions, `TransferLoop.start/cancel`
/// and I/O never run while it is held. `commitLock` serializes a flush's claim with a change of
/// version; the `fdatasync` and the store commit run under it. Blocks are written out with no
/// lock held (`writeOut`).
final class CachedFile: Sendable {
    let itemID: Int64
    let key: CacheFileKey
    let origin: FetchOrigin
    let file: CacheFile
    let loop: TransferLoop
    let index: any CacheIndex
    let settings: FetchSettings
    let flusher: Flusher
    /// Runs completions that must not run on the caller's thread, and deadline timers.
    let callbacks: DispatchQueue
    /// Serializes flush commits and generation changes, so a commit never lands after the
    /// reset that made its bytes stale.
    let commitLock = Mutex<Void>(())
    /// Where arriving bytes gather before they go to the file past the page cache (nil: they
    /// are written as they come).
    let staging: StagingPool?
    /// Where full staging blocks are written out (nil: on the transfer's thread).
    let blockWrites: DispatchQueue?
    let state: Mutex<CachedFileState>
    /// Told (on the flusher's or a download's thread) when a flush makes every byte claimed.
    let onCompletelyCommitted: @Sendable (CachedFile) -> Void

    /// Trusts only what the store says is on disk (`stored`). The cache file is opened here
    /// only to check that it still backs those claims; else at first use (`CacheFile`).
    init(itemID: Int64, key: CacheFileKey, stored: StoredCacheFile, path: String, descriptors: CacheDescriptors,
         room: DiskRoom = DiskRoom(keepFree: 0), loop: TransferLoop, index: any CacheIndex, settings: FetchSettings,
         flusher: Flusher, callbacks: DispatchQueue,
         staging: StagingPool? = nil, blockWrites: DispatchQueue? = nil,
         onCompletelyCommitted: @escaping @Sendable (CachedFile) -> Void = { _ in }) throws {
        self.itemID = itemID
        self.staging = staging
        self.blockWrites = blockWrites
        self.onCompletelyCommitted = onCompletelyCommitted
        self.key = key
        self.origin = stored.origin
        self.loop = loop
        self.index = index
        self.settings = settings
        self.flusher = flusher
        self.callbacks = callbacks
        file = CacheFile(path: path, descriptors: descriptors, room: room)
        var initial = CachedFileState()
        var (validator, ranges) = (stored.validator, stored.ranges)
        // A claim the file cannot back (deleted or cut behind our back) is dropped whole.
        if let last = ranges.last?.upperBound, try file.size() < last {
            try index.reset(itemID: itemID, file: key, validator: nil)
            (validator, ranges) = (nil, [])
        }
        initial.validator = validator
        initial.total = validator?.totalSize
        initial.present = RangeSet(ranges)
        initial.committed = initial.present
        state = Mutex(initial)
    }

    // MARK: - Readers

    func isAvailable(_ range: Range<Int64>) -> Bool {
        state.withLock { $0.isSatisfied(range) }
    }

    /// Whether every byte of `range` is in the file or arrived in a kept block.
    func hasArrived(_ range: Range<Int64>) -> Bool {
        state.withLock { $0.hasArrived(range) }
    }

    /// The bytes of `range` if all of them are still in memory (they arrived recently), else nil.
    func bytesInMemory(_ range: Range<Int64>) -> BytesInMemory? {
        state.withLock { $0.bytesInMemory(range) }
    }

    /// Lets go of the blocks kept for readers whose bytes are all in the file (nobody reads
    /// the file now). Their memory goes back to the pool (a leaf lock).
    func dropRecentBlocks() {
        state.withLock { s in s.recent.removeAll(where: s.isSettled) }
    }

    /// Calls `completion` once `range` is written (or fails), or `bytes` with the bytes of
    /// `range` once they have all arrived, written or not (`RangeFetcher.whenAvailable`); starts fetches as needed.
    func request(_ range: Range<Int64>, readAhead: Int64, deadline: ContinuousClock.Instant?,
                 length: FetchLength = .streamWhenLarge, forDownload: Bool = false,
                 bytes: (@Sendable (BytesInMemory) -> Void)? = nil,
                 completion: @escaping @Sendable (Result<Void, FetchError>) -> Void) -> Int? {
        // `gathered`: blocks holding bytes that arrived but are not in the file yet, which go
        // to the file now (the fetch may stall before the block fills).
        // `received`: the file's count of arrived bytes, where the wait's deadline starts from.
        enum Outcome {
            case ready, inMemory(BytesInMemory), failed(FetchError)
            case waiting(Int, FetchChanges, gathered: [StagingBlock], received: Int64)
        }
        let timeLeft = deadline.map { $0 - .now }.flatMap { $0 < .seconds(86_400) ? $0 : nil }
        let timer = timeLeft.map { _ in WaitDeadline() }
        let bytes = bytes.map { bytes in { @Sendable pieces in timer?.end(); bytes(pieces) } }
        let completion: @Sendable (Result<Void, FetchError>) -> Void = { result in timer?.end(); completion(result) }
        let outcome: Outcome = state.withLock { s in
            if bytes != nil, let inMemory = s.bytesInMemory(range) { return .inMemory(inMemory) }
            if s.isSatisfied(range) { return .ready }
            if let error = s.writeError { return .failed(error) }
            let id = s.makeID()
            s.stopsWhenUnwanted = false
            s.waiters[id] = Waiter(range: range, readAhead: max(0, readAhead), length: length, forDownload: forDownload,
                                   bytes: bytes, completion: completion)
            return .waiting(id, s.plan(settings),
                            gathered: s.fetches.values.compactMap(\.block).filter { s.completes(range, $0) }, received: s.received)
        }
        switch outcome {
        case .ready:
            callbacks.async { completion(.success(())) }
            return nil
        case .inMemory(let pieces):
            callbacks.async { bytes?(pieces) }
            return nil
        case .failed(let error):
            callbacks.async { completion(.failure(error)) }
            return nil
        case .waiting(let id, let changes, let gathered, let received):
            for block in gathered { writeOut(block) }
            apply(changes)
            if let timer, let timeLeft {
                endWaitWithoutProgress(id, timer: timer, after: timeLeft, received: received)
            }
            return id
        }
    }

    /// Ends wait `id` once `interval` passes with no byte of the file arriving (the read
    /// bound is for bytes neither cached nor arriving): a slow link whose bytes trickle in is
    /// waited for, however long the read takes, and a stalled one fails by then.
    private func endWaitWithoutProgress(_ id: Int, timer: WaitDeadline, after interval: Duration, received: Int64) {
        // Weak: a file that went has no waiters.
        timer.start(after: Self.dispatchInterval(interval), on: callbacks) { [weak self, itemID] in
            guard let self else { return }
            let now = state.withLock { $0.received }
            if now > received { return endWaitWithoutProgress(id, timer: timer, after: interval, received: now) }
            endWait(id, FetchError(.timedOut, "no byte of item \(itemID) arrived within the read bound", reason: .timeout))
        }
    }

    /// Ends one wait early (deadline or cancel); fetches keep filling the cache.
    func endWait(_ id: Int, _ error: FetchError) {
        guard let waiter = state.withLock({ $0.waiters.removeValue(forKey: id) }) else { return }
        waiter.completion(.failure(error))
    }

    /// Its last reader closed, or its only one jumped away: stops the fetches no waiter needs
    /// (read-ahead would run on), and the others once their waiters have their bytes (the
    /// kernel's own read-ahead may still be waiting). Bytes that arrived go to the file and
    /// are claimed as ever; a download always has a waiter, and a new request undoes this.
    /// - Returns: whether it stopped a transfer before the origin had sent all it asked for
    /// (its connection then closes).
    func stopUnwantedFetches() -> Bool {
        let (handles, cutShort) = state.withLock { s -> ([TransferHandle], Bool) in
            s.stopsWhenUnwanted = true
            var handles: [TransferHandle] = []
            var cutShort = false
            for (id, fetch) in s.fetches where fetch.failure == nil {
                let ahead = fetch.cursor..<max(fetch.cursor, s.limit(fetch))
                let needed = s.waiters.values.filter { !s.isSatisfied($0.range) && s.clamped($0.range).overlaps(ahead) }
                if let neededEnd = needed.map({ s.clamped($0.range).upperBound }).max() {
                    // It stops once its waiters have their bytes, whatever comes after.
                    s.fetches[id]?.stop = min(fetch.stop, max(fetch.cursor, neededEnd))
                    if needed.allSatisfy(\.forDownload) { s.fetches[id]?.setForReader(false) }
                    continue
                }
                s.fetches[id]?.failure = Self.unwanted(origin)
                guard let handle = fetch.handle else { continue }
                handles.append(handle)
                // Its last bytes may be in a block already (`receive` stages them before it
                // moves the cursor), read by the reader that just closed: not cut short.
                let rest = fetch.cursor..<max(fetch.cursor, min(fetch.askedEnd, s.total ?? .max))
                if s.isLive(fetch), !s.hasArrived(rest) { cutShort = true }
            }
            return (handles, cutShort)
        }
        handles.forEach(loop.cancel)
        return cutShort
    }

    static func unwanted(_ origin: FetchOrigin) -> FetchError {
        FetchError(.cancelled, "\(origin.url): no reader wants these bytes any more")
    }

    /// Stops every fetch and fails every waiter with `error`.
    func cancelAll(_ error: FetchError) {
        end(state.withLock { $0.endAll(error) }, error)
    }

    /// Cancels what `CachedFileState.endAll` ended and tells its waiters, with no lock held.
    func end(_ ended: (handles: [TransferHandle], waiters: [Waiter]), _ error: FetchError) {
        ended.handles.forEach(loop.cancel)
        for waiter in ended.waiters { waiter.completion(.failure(error)) }
    }

    /// Whether the file may be dropped (`CachedFileState.isIdle`), with no flush committing
    /// right now (its lock is free).
    var isIdle: Bool {
        commitLock.withLockIfAvailable { _ in state.withLock { $0.isIdle } } ?? false
    }

    struct Progress: Sendable {
        var written: Int64
        var committed: Int64
        var total: Int64?
    }

    var progress: Progress {
        state.withLock { Progress(written: $0.present.byteCount, committed: $0.committed.byteCount, total: $0.total) }
    }

    /// Whether every byte of the file is written or has arrived in memory (flushed or not).
    var hasEveryByte: Bool {
        state.withLock { s in
            guard let total = s.total else { return false }
            return s.hasArrived(0..<total)
        }
    }

    /// Whether every byte of the file is flushed and claimed; nil when its size is unknown.
    var isCompletelyCommitted: Bool? {
        state.withLock { s in s.total.map { s.committed.contains(0..<$0) } }
    }

    /// Takes `validator` (a HEAD's answer) as the version to fetch when nothing of the file is
    /// known yet, so its size shows before any byte arrives. Under `commitLock`, like every
    /// change of version; a fetch that finds another version starts a new generation as ever.
    func adopt(_ validator: CacheValidator) {
        commitLock.withLock { _ in
            let adopted = state.withLock { s -> Bool in
                guard s.validator == nil, s.total == nil, s.present.isEmpty, s.fetches.isEmpty else { return false }
                s.validator = validator
                s.total = validator.totalSize
                return true
            }
            if adopted { try? index.reset(itemID: itemID, file: key, validator: validator) }
        }
    }

    /// A side file nothing was fetched into takes the whole copy `link` puts at its path and
    /// claims (`RangeFetcher.linkWholeSideFile`). Under `commitLock`, like every change of
    /// version, so of two readers opening it at once one links and the other finds the bytes.
    func takeWholeCopy(_ link: (StoredCacheFile) -> StoredCacheFile?) {
        let ready = commitLock.withLock { _ -> [Waiter] in
            guard isEmptyAndIdle, let linked = link(StoredCacheFile(origin: origin, validator: nil, ranges: [])) else { return [] }
            // Its descriptors are of the file the link replaced.
            file.replacedAtPath()
            return state.withLock { s in
                s.startNewGeneration(validator: linked.validator)
                s.present = RangeSet(linked.ranges)
                s.committed = s.present
                return s.takeSatisfiedWaiters()
            }
        }
        for waiter in ready { waiter.completion(.success(())) }
    }

    /// No byte of it written or arriving, no fetch.
    var isEmptyAndIdle: Bool {
        state.withLock { s in s.present.isEmpty && s.fetches.isEmpty && s.unflushed.isEmpty && s.writeError == nil }
    }

    /// A fetch of it is running.
    var isFetching: Bool {
        state.withLock { s in s.fetches.values.contains { s.isLive($0) } }
    }

    /// Forgets every byte of `files` (store first, in one transaction, then the files), once
    /// their transfers and waiters are told: nothing here calls back. Every file's
    /// `commitLock` is held, in one global order (as a batch flush takes them), so no commit
    /// lands after the reset; `linkLock` inside them (the order a side file's `takeWholeCopy`
    /// takes them in), so no copy is linked from these bytes while they go.
    static func discardBytes(of files: [CachedFile], index: any CacheIndex, linkLock: borrowing Mutex<Void>) throws {
        var seen = Set<ObjectIdentifier>()
        let files = files.filter { seen.insert(ObjectIdentifier($0)).inserted }
        try withCommitLocks(of: files) { () throws in
            for file in files {
                file.state.withLock { s in
                    s.startNewGeneration(validator: nil)
                    s.writeError = nil
                    s.restarts = 0
                }
            }
            try linkLock.withLock { _ in
                try index.reset(files.map { ($0.itemID, $0.key) })
                for file in files { try file.file.removeBytes() }
            }
        }
    }

    /// Runs `body` holding the commit locks of `files` (each once), taken in one global order
    /// (by identity) so that two batches never wait for each other.
    static func withCommitLocks<E: Error>(of files: [CachedFile], _ body: () throws(E) -> Void) throws(E) {
        let ordered = files.sorted { ObjectIdentifier($0) < ObjectIdentifier($1) }
        func lock(from position: Int) throws(E) {
            guard position < ordered.count else { return try body() }
            try ordered[position].commitLock.withLock { _ throws(E) in try lock(from: position + 1) }
        }
        try lock(from: 0)
    }

    /// After a write failure (a full disk): gives back the space of bytes written but never
    /// claimed, so the store can record the stop on the same disk, and allows writes again,
    /// for a later resume.
    func recoverFromWriteFailure() {
        // The commit lock keeps `committed` as it is; the write error, until the space is
        // freed, keeps every fetch from writing (failed ones write no more: `isLive`).
        commitLock.withLock { _ in
            guard let kept = state.withLock({ s in s.writeError == nil ? nil : s.committed }) else { return }
            try? file.freeAll(except: kept)
            state.withLock { s in
                s.writeError = nil
                s.present = s.committed
            }
        }
    }
}

