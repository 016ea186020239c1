import OfflineHTTP
import OfflineStore

/// One range request in flight for an item file.
struct Fetch: Sendable {
    /// The origin version it writes for; a fetch of an older generation writes nothing.
    var generation: Int
    /// First byte asked.
    let start: Int64
    /// One past the last byte asked; `Int64.max`: to the end of the file.
    let askedEnd: Int64
    var handle: TransferHandle?
    /// Next byte it writes.
    var cursor: Int64
    /// When its first byte arrived: with `cursor - start`, how fast it receives.
    var firstByteAt: ContinuousClock.Instant?
    /// It stops writing here (a later fetch took over the rest, or the file ends).
    var stop: Int64
    /// It writes up to here, then pauses until a reader wants more (a streaming reader's
    /// fetch, `FetchSettings.streamBytes`); at or past `stop`: it never pauses.
    var allowance: Int64
    /// Asked for more than its reader wanted at first (`FetchSettings.streamBytes`): it serves
    /// that reader's later wishes too, up to its allowance however far that is ahead.
    let streams: Bool
    /// Paused at its allowance: the transfer loop holds the connection unread.
    var paused = false
    /// A reader has waited for its bytes; a fetch only downloads wait for is held back by the
    /// transfer loop while a reader's receives (`TransferHandle.isWaitedFor`).
    var forReader = true
    /// How far readers allowed it (`.max`: all of `allowance`); a download allows it to the
    /// end of the file, which a reader's seek must not count as asked before.
    var readerAllowance = Int64.max
    /// Times it paused for its reader (which pause an idle check is about; a fetch that
    /// paused may find that the origin gave up on the idle connection).
    var pauses = 0
    /// Paused because no staging block was free: a block write of this file resumes it.
    var waitsForBlock = false
    /// The response head passed every check.
    var validated = false
    var reachedStop = false
    /// Why it must end, decided by the cache (a bad response, a write error, a cancel).
    var failure: FetchError?
    /// Where its bytes are being gathered before they go to the file (nil: none waiting).
    var block: StagingBlock?

    /// Its bytes from here on are not in the file yet: gathered in `block`, or still to come.
    var unwrittenFrom: Int64 { block.map { $0.unwritten.lowerBound } ?? cursor }

    /// Whether a reader waits for its bytes; its transfer is told.
    mutating func setForReader(_ value: Bool) {
        forReader = value
        handle?.isWaitedFor = value
    }
}

/// What `CachedFileState.plan` changed: fetches to start, paused ones to resume, and
/// paused ones that are no longer wanted (to cancel; they end as if done).
struct FetchChanges {
    var created: [Int] = []
    var resumed: [TransferHandle] = []
    var retired: [TransferHandle] = []
}

/// What a fetch started for a waiter asks the origin for.
public enum FetchLength: Sendable {
    /// Exactly the bytes it wants (the first window).
    case exact
    /// The rest of the file when it wants `FetchSettings.streamBytes` or more (its range and
    /// read-ahead), else exactly what it wants.
    case streamWhenLarge
    /// The rest of the file, pausing whenever it is as far as its readers want: a player
    /// reads on from wherever it reads, so its later reads join this request instead of each
    /// starting one (a round trip each on a real link).
    case stream
}

/// A reader (or a download) waiting for bytes.
struct Waiter: Sendable {
    /// `upperBound == Int64.max`: to the end of the file, whatever its size.
    var range: Range<Int64>
    var readAhead: Int64
    var length = FetchLength.streamWhenLarge
    /// A download's wait (nobody reads the bytes now), not a reader's.
    var forDownload = false
    /// Takes the bytes from memory instead of `completion` (`RangeFetcher.whenAvailable`), if set: called
    /// as soon as all of them have arrived, before they are in the file.
    var bytes: (@Sendable (BytesInMemory) -> Void)?
    var completion: @Sendable (Result<Void, FetchError>) -> Void
}

/// Everything `CachedFile` guards with its lock: what is on disk, what is flushed, the
/// fetches filling the file and the waiters. Pure bookkeeping; no I/O here.
struct CachedFileState: Sendable {
    var generation = 0
    var validator: CacheValidator?
    var total: Int64?
    /// Written to the file (readable now), this generation.
    var present = RangeSet()
    /// The blocks that bytes arrived in most recently, oldest first (the fetches' own blocks
    /// among them): a read of bytes they hold is answered from memory.
    var recent: [StagingBlock] = []
    /// How many blocks `recent` keeps: a sequential reader reads bytes that arrived up to its
    /// read-ahead earlier (ReadPattern.maxReadAhead), most of it within this.
    static let recentBlocks = 20
    /// Flushed and claimed in the store.
    var committed = RangeSet()
    /// Written, not yet flushed.
    var unflushed = RangeSet()
    /// What each of the last flushes claimed, oldest first (`CachedFile.flushesKeptInMemory`).
    var recentlyFlushed: [[Range<Int64>]] = []
    var unflushedBytes: Int64 = 0
    /// Bytes received from the origin for this file so far: a wait's deadline passes only
    /// once none arrived for a whole read bound (`CachedFile.endWaitWithoutProgress`).
    var received: Int64 = 0
    var flushScheduled = false
    var urgentFlushScheduled = false
    var fetches: [Int: Fetch] = [:]
    var waiters: [Int: Waiter] = [:]
    var nextID = 1
    /// Version changes since the last fetch that completed.
    var restarts = 0
    /// A write or flush failed: nothing more is written until the file is discarded.
    var writeError: FetchError?
    /// Its last reader closed: a fetch stops once no waiter wants its bytes (cleared by the
    /// next request).
    var stopsWhenUnwanted = false

    /// Nothing in flight: no fetch, no waiter, every written byte flushed and claimed (the
    /// store holds all there is to know of the file), no block on its way to the disk and no
    /// failed write to remember. Such a file may be forgotten and loaded again from the store.
    var isIdle: Bool {
        fetches.isEmpty && waiters.isEmpty && unflushed.isEmpty && !flushScheduled && !urgentFlushScheduled
            && writeError == nil && recent.allSatisfy(\.isWhollyWritten)
    }

    mutating func makeID() -> Int {
        defer { nextID += 1 }
        return nextID
    }

    /// Where a fetch stops writing: its stop, or the end of the file when known first.
    func limit(_ fetch: Fetch) -> Int64 { min(fetch.stop, total ?? .max) }

    func isLive(_ fetch: Fetch) -> Bool {
        fetch.generation == generation && fetch.failure == nil && !fetch.reachedStop
    }

    /// `range` cut at the end of the file when known.
    func clamped(_ range: Range<Int64>) -> Range<Int64> {
        guard let total else { return range }
        let upper = min(range.upperBound, total)
        return min(range.lowerBound, upper)..<upper
    }

    func isSatisfied(_ range: Range<Int64>) -> Bool {
        if range.upperBound == .max && total == nil { return false }
        return present.contains(clamped(range))
    }

    /// The end of the file is now known.
    mutating func learnTotal(_ value: Int64) {
        total = value
        if validator != nil { validator?.totalSize = value }
    }

    /// Removes and returns the waiters whose bytes are all present.
    mutating func takeSatisfiedWaiters() -> [Waiter] {
        guard !waiters.isEmpty else { return [] }
        var ready: [Waiter] = []
        for (id, waiter) in waiters where isSatisfied(waiter.range) {
            waiters[id] = nil
            ready.append(waiter)
        }
        return ready
    }

    /// Removes and returns the waiters that take bytes from memory whose bytes have all
    /// arrived in `recent`, each with its bytes.
    mutating func takeWaitersInMemory() -> [(waiter: Waiter, bytes: BytesInMemory)] {
        guard !waiters.isEmpty, !recent.isEmpty else { return [] }
        var taken: [(waiter: Waiter, bytes: BytesInMemory)] = []
        for (id, waiter) in waiters where waiter.bytes != nil {
            guard let bytes = bytesInMemory(waiter.range) else { continue }
            waiters[id] = nil
            taken.append((waiter, bytes))
        }
        return taken
    }

    /// Makes sure every byte some waiter still lacks is on its way: bytes close ahead of a
    /// running fetch wait for it (allowed that far, resumed if paused); bytes far ahead split
    /// it (it stops there, a new fetch takes the rest); bytes nobody fetches get a fetch up to
    /// the next held byte. A waiter whose `length` streams gets a streaming fetch: asked to
    /// that next held byte, allowed to its range plus read-ahead; others get exactly their
    /// range plus read-ahead.
    mutating func plan(_ settings: FetchSettings, now: ContinuousClock.Instant = .now) -> FetchChanges {
        guard writeError == nil else { return FetchChanges() }
        var changes = FetchChanges()
        for id in waiters.keys.sorted() {
            guard let waiter = waiters[id] else { continue }
            for gap in present.gaps(in: clamped(waiter.range)) {
                // How far this waiter wants bytes to come.
                var wanted = gap.upperBound == .max ? Int64.max : gap.upperBound.addingReportingOverflow(waiter.readAhead).partialValue
                if wanted < gap.upperBound { wanted = .max }
                var offset = gap.lowerBound
                while offset < gap.upperBound {
                    // Arrived, on its way to the file (a block queued for its write).
                    if let block = recent.first(where: { $0.generation == generation && $0.unwritten.contains(offset) }) {
                        offset = block.unwritten.upperBound
                        continue
                    }
                    if let (fetchID, fetch) = fetches.first(where: { isLive($0.value) && $0.value.unwrittenFrom <= offset && offset < limit($0.value) }) {
                        let end = limit(fetch)
                        // Bytes it gathered and has not written yet count as close ahead; so
                        // do the bytes a streaming fetch's reader asked for before (the fetch
                        // may be behind the reader's read-ahead by more than `nearBytes`), but
                        // no further than that read-ahead, nor than readers asked: a download
                        // that joined the fetch allows it to the end of the file, and a seek
                        // far ahead must still get a fetch of its own.
                        let askedBefore = fetch.streams && offset <= min(fetch.allowance, fetch.readerAllowance)
                            && offset - fetch.cursor <= settings.nearBytes + ReadPattern.maxReadAhead
                        if offset - fetch.cursor <= Self.nearBytes(of: fetch, settings, now: now) || askedBefore {
                            allow(fetchID, upTo: min(wanted, end), byReader: !waiter.forDownload, &changes)
                            offset = end
                            continue
                        }
                        // A seek far ahead: the running fetch stops where the new one starts,
                        // or where it would pause (nobody wants the bytes after that).
                        let stop = min(offset, max(fetch.cursor, fetch.allowance))
                        fetches[fetchID]?.stop = stop
                        if fetch.paused && fetch.cursor >= stop { retire(fetchID, &changes) }
                        changes.created.append(addFetch(from: offset, to: end, allowance: min(wanted, end),
                                                        forReader: !waiter.forDownload))
                        offset = end
                        continue
                    }
                    let streams = switch waiter.length {
                    case .exact: false
                    case .streamWhenLarge: wanted - offset >= settings.streamBytes
                    case .stream: true
                    }
                    var stop = streams ? Int64.max : wanted
                    if let held = present.nextHeld(atOrAfter: offset) { stop = min(stop, held) }
                    for fetch in fetches.values where isLive(fetch) && fetch.unwrittenFrom > offset { stop = min(stop, fetch.unwrittenFrom) }
                    if let total { stop = min(stop, total) }
                    changes.created.append(addFetch(from: offset, to: stop, allowance: min(wanted, stop),
                                                    forReader: !waiter.forDownload))
                    offset = min(wanted, stop)
                }
            }
        }
        return changes
    }

    /// How far ahead of a running fetch a wanted byte waits for it rather than getting a
    /// fetch of its own: `nearBytes`; for a fetch a download started or joined, no more than
    /// what it received in about a second (and no less than `firstWindow`). Such a stream is
    /// held whenever a reader receives, and on a slow link `nearBytes` is many seconds of it,
    /// where a fetch of its own costs a round trip. Readers' own streams go at the link's
    /// speed once wanted (their average counts their pauses, which say nothing of that).
    static func nearBytes(of fetch: Fetch, _ settings: FetchSettings, now: ContinuousClock.Instant) -> Int64 {
        let downloads = !fetch.forReader || fetch.readerAllowance != .max
        guard downloads, let since = fetch.firstByteAt, now - since >= .milliseconds(500) else { return settings.nearBytes }
        let (seconds, attoseconds) = (now - since).components
        let perSecond = Double(fetch.cursor - fetch.start) / (Double(seconds) + Double(attoseconds) * 1e-18)
        return min(settings.nearBytes, max(settings.firstWindow, Int64(perSecond)))
    }

    /// Ends every fetch not already ending with `error` and takes every waiter: the transfers
    /// to cancel and the waiters to fail, once the lock is let go (`CachedFile.end`).
    mutating func endAll(_ error: FetchError) -> (handles: [TransferHandle], waiters: [Waiter]) {
        var handles: [TransferHandle] = []
        for (id, fetch) in fetches where fetch.failure == nil {
            fetches[id]?.failure = error
            if let handle = fetch.handle { handles.append(handle) }
        }
        defer { waiters = [:] }
        return (handles, Array(waiters.values))
    }

    /// Lets a fetch write up to `end` at least, resuming it if it paused.
    private mutating func allow(_ id: Int, upTo end: Int64, byReader: Bool, _ changes: inout FetchChanges) {
        guard var fetch = fetches[id] else { return }
        if byReader {
            fetch.readerAllowance = max(min(fetch.readerAllowance, fetch.allowance), end)
            if !fetch.forReader { fetch.setForReader(true) }
        } else if fetch.readerAllowance == .max {
            fetch.readerAllowance = fetch.allowance
        }
        defer { fetches[id] = fetch }
        guard fetch.allowance < end else { return }
        fetch.allowance = end
        if fetch.paused, let handle = fetch.handle {
            fetch.paused = false
            changes.resumed.append(handle)
        }
    }

    /// Ends a paused fetch nobody wants more of, as if it had reached its stop.
    mutating func retire(_ id: Int, _ changes: inout FetchChanges) {
        guard var fetch = fetches[id], !fetch.reachedStop else { return }
        fetch.reachedStop = true
        fetch.stop = min(fetch.stop, fetch.cursor)
        fetches[id] = fetch
        if let handle = fetch.handle { changes.retired.append(handle) }
    }

    private mutating func addFetch(from start: Int64, to end: Int64, allowance: Int64, forReader: Bool) -> Int {
        let id = makeID()
        fetches[id] = Fetch(generation: generation, start: start, askedEnd: end, cursor: start, stop: end,
                            allowance: allowance, streams: end > allowance, forReader: forReader,
                            readerAllowance: forReader ? .max : start)
        return id
    }


    /// Forgets every byte: the next bytes belong to another version of the file.
    mutating func startNewGeneration(validator: CacheValidator?) {
        generation += 1
        self.validator = validator
        total = validator?.totalSize
        present = RangeSet()
        committed = RangeSet()
        unflushed = RangeSet()
        unflushedBytes = 0
        recent = []
    }

    /// Bytes of `generation` reached the file: counts them present and unflushed, and returns
    /// the waiters they complete and when to flush (nil: a flush is already due).
    mutating func noteWritten(_ written: Range<Int64>, generation: Int,
                              settings: FetchSettings) -> (ready: [Waiter], flushAfter: Duration?) {
        guard self.generation == generation, !written.isEmpty else { return ([], nil) }
        present.insert(written)
        unflushed.insert(written)
        unflushedBytes += Int64(written.count)
        var flushAfter: Duration?
        if unflushedBytes >= settings.flushBytes && !urgentFlushScheduled {
            urgentFlushScheduled = true
            flushScheduled = true
            flushAfter = .zero
        } else if !flushScheduled {
            flushScheduled = true
            flushAfter = settings.flushInterval
        }
        return (takeSatisfiedWaiters(), flushAfter)
    }

    /// Adds a block that bytes are arriving in to `recent`, dropping the oldest blocks already
    /// wholly written once there are more than `recentBlocks`. A block a fetch still fills is
    /// kept even when all it holds so far is written (a flush wrote it early): its next bytes
    /// are known only through it until they reach the file.
    mutating func keep(_ block: StagingBlock) {
        recent.append(block)
        while recent.count > Self.recentBlocks, let oldest = recent.firstIndex(where: isSettled) {
            recent.remove(at: oldest)
        }
    }

    /// Lets go of the oldest kept block whose bytes are all in the file (its memory goes back
    /// to the pool unless a reader still holds it); false when there is none.
    mutating func dropOldestSettledBlock() -> Bool {
        guard let oldest = recent.firstIndex(where: isSettled) else { return false }
        recent.remove(at: oldest)
        return true
    }

    /// Whether a full block of this file is on its way to the disk (its write frees a block).
    var isWritingBlocks: Bool {
        recent.contains { $0.generation == generation && $0.to == StagingBlock.size && !$0.isWhollyWritten }
    }

    /// Un-pauses the fetches that wait for a staging block; returns their transfers to resume.
    mutating func resumeFetchesWaitingForBlocks() -> [TransferHandle] {
        var handles: [TransferHandle] = []
        for (id, fetch) in fetches where fetch.waitsForBlock {
            fetches[id]?.waitsForBlock = false
            fetches[id]?.paused = false
            if let handle = fetch.handle { handles.append(handle) }
        }
        return handles
    }

    /// Whether all of `block`'s bytes are in the file and no fetch adds to it any more (a
    /// fetch that reached its stop or failed adds nothing, though it holds its block until it ends).
    func isSettled(_ block: StagingBlock) -> Bool {
        block.isWhollyWritten && !fetches.values.contains { $0.block === block && isLive($0) }
    }

    /// Whether writing out `block` gives a reader of `range` its last missing bytes: the block
    /// holds bytes of it not in the file yet, and its end. (A read-ahead that reaches past what
    /// has arrived must not make every arriving piece go to the file on its own.)
    func completes(_ range: Range<Int64>, _ block: StagingBlock) -> Bool {
        let wanted = clamped(range)
        guard !block.isWhollyWritten, wanted.overlaps(block.unwritten) else { return false }
        return wanted.upperBound <= block.unwritten.upperBound
    }

    /// All of `range` (cut at the end of the file) from `recent`, if it has arrived there;
    /// nil otherwise, and for a range to the end of a file of unknown size.
    func bytesInMemory(_ range: Range<Int64>) -> BytesInMemory? {
        if range.upperBound == .max && total == nil { return nil }
        return recentPieces(of: clamped(range)).map(BytesInMemory.init(pieces:))
    }

    /// Whether every byte of `range` (cut at the end) is in the file or arrived in a kept block.
    func hasArrived(_ range: Range<Int64>) -> Bool {
        present.gaps(in: clamped(range)).allSatisfy { recentPieces(of: $0) != nil }
    }

    /// Where in `recent` the bytes of `range` are, in order, if all of them arrived there (in
    /// the file yet or not: the file gets the same bytes); nil otherwise.
    func recentPieces(of range: Range<Int64>) -> [(block: StagingBlock, bytes: Range<Int>)]? {
        guard !range.isEmpty, !recent.isEmpty else { return nil }
        var pieces: [(block: StagingBlock, bytes: Range<Int>)] = []
        var offset = range.lowerBound
        while offset < range.upperBound {
            guard let block = recent.last(where: { $0.generation == generation && $0.arrived.contains(offset) }) else { return nil }
            let end = min(range.upperBound, block.arrived.upperBound)
            pieces.append((block, Int(offset - block.start)..<Int(end - block.start)))
            offset = end
        }
        return pieces
    }
}

