import Dispatch
import Foundation
import Logging
import Synchronization

/// What answers one read of an open item file.
public enum ReadAnswer: Sendable {
    /// These bytes (short at the end of a file whose size was not known; empty at its end).
    case bytes([UInt8])
    /// Bytes still in memory: they arrived moments ago.
    case memory(BytesInMemory)
    /// A region of the cache file, to splice or copy from. It keeps its descriptor open.
    case cacheFile(CacheFileRegion)
    case failure(FetchError)
}

/// `count` bytes of a cache file from `offset`: the descriptor stays open while the region
/// is held, whatever the reader's close does meanwhile.
public struct CacheFileRegion: Sendable {
    public var descriptor: Int32 { borrowed.fd }
    public let offset: Int64
    public let count: Int
    let borrowed: BorrowedDescriptor
}

/// A reader's cache-file descriptor borrowed from `LibraryReader.descriptors`, given back when
/// the last answer using it is done; it holds its reader until then.
final class BorrowedDescriptor: Sendable {
    let fd: Int32
    private let key: CacheDescriptors.Key
    private let pool: CacheDescriptors
    private let reader: ItemFileReader

    init(_ fd: Int32, key: CacheDescriptors.Key, pool: CacheDescriptors, reader: ItemFileReader) {
        (self.fd, self.key, self.pool, self.reader) = (fd, key, pool, reader)
    }

    deinit { pool.giveBack(key, fd) }
}

/// Lets a read's caller stop waiting (a FUSE interrupt): the read is then answered
/// `.failure(.cancelled)` unless it was answered before. Handed out before the bytes are
/// asked for, so an interrupt that comes first is not lost.
public final class ReadCancellation: Sendable {
    private struct State {
        var cancelled = false
        var onCancel: (@Sendable () -> Void)?
    }
    private let state = Mutex(State())  // leaf lock

    public init() {}

    public func cancel() {
        let onCancel = state.withLock { state -> (@Sendable () -> Void)? in
            state.cancelled = true
            defer { state.onCancel = nil }
            return state.onCancel
        }
        onCancel?()
    }

    /// What `cancel` does; at once if it came already.
    func attach(_ onCancel: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if !state.cancelled { state.onCancel = onCancel }
            return state.cancelled
        }
        if now { onCancel() }
    }
}

/// One open item file (media, side file, HLS part): the engine's side of a reader. A read
/// asks it for a range and gets exactly one `ReadAnswer`: bytes now, a cache-file region, or
/// later, once the bytes arrive (or a failure by the read bound). Read-ahead and prefetch
/// (`ReadPattern`), the playback a player's reads are, the scanner limit and the move of a
/// large answer off the transfer thread all live here.
public final class ItemFileReader: Sendable {
    public let itemID: Int64
    public let key: CacheFileKey
    /// Where reads are cut; nil for a side file whose size is not known yet.
    public let size: Int64?
    public let readerClass: ReaderClass
    /// Where byte 0 is in the cache file (an HLS part that is a byte range of its URL).
    let baseOffset: Int64
    /// Offset of byte 0 in the item's media, for `playback`.
    let playbackOffset: Int64
    let playback: PlaybackSession?
    /// The uncached bytes a scanner may have (policy `scanner-reads`); nil: no limit.
    let scannerReads: ScannerReads?
    /// What is left of `ScannerReads.bytesElsewhere` for this open.
    private let scannerBytesLeft = Atomic<Int64>(ScannerReads.bytesElsewhere)
    /// Whether this open counts as an open of the item (no eviction meanwhile).
    let locksItem: Bool
    private let reading: LibraryReader
    private let path: String
    private let pattern: Mutex<ReadPattern>  // leaf lock
    /// The last prefetches asked for, cancelled at close (older ones have their bytes by
    /// then: prefetches run in order).
    private let prefetches = Mutex<[any FetchTicket]>([])  // leaf lock
    /// The version of the file this open answered from: once the origin's file changed, its
    /// reads fail rather than go on with the new version's bytes after the old one's.
    private let answeredVersion = Mutex<FileVersion?>(nil)  // leaf lock
    /// Whether the event log was told that this open's reads fail for another version, or
    /// for a full disk.
    private let toldVersionChange = Atomic<Bool>(false)
    private let toldNoSpace = Atomic<Bool>(false)
    /// The size of the origin's media when it is not the one this open was given (a catalog
    /// that stated it wrong): reads end there instead. -1 until learned.
    private let originSize = Atomic<Int64>(-1)

    init(reading: LibraryReader, itemID: Int64, key: CacheFileKey, size: Int64?, baseOffset: Int64 = 0,
         playbackOffset: Int64 = 0, readerClass: ReaderClass, playback: PlaybackSession?, scannerReads: ScannerReads?,
         locksItem: Bool) {
        self.reading = reading
        self.itemID = itemID
        self.key = key
        self.size = size
        self.baseOffset = baseOffset
        self.playbackOffset = playbackOffset
        self.readerClass = readerClass
        self.playback = playback
        self.scannerReads = scannerReads
        self.locksItem = locksItem
        path = reading.fetcher.cacheFilePath(itemID: itemID, file: key)
        pattern = Mutex(ReadPattern(readerClass: readerClass, size: size))
        if locksItem { reading.fetcher.readerOpened(itemID: itemID) }
    }

    // No answer holds the reader any more: its descriptor, if the pool kept one, goes.
    deinit { reading.descriptors.forget(ObjectIdentifier(self)) }

    /// The last close: prefetches stop, a playback ends, and the item's fetches nobody else
    /// wants stop with its last reader.
    public func close() {
        for ticket in prefetches.withLock({ $0 }) { ticket.cancel() }
        playback?.end()
        // The origin may have told another size after the last answer (or with no read).
        noteOriginSize(reading.fetcher.knownTotal(itemID: itemID, file: key))
        if locksItem { reading.fetcher.readerClosed(itemID: itemID) }
    }

    /// Fetches the first bytes now, before the first read asks (`RangeFetcher.startFirstWindow`):
    /// for programs that read the start next. Not for those that read pieces.
    public func startFirstWindow() {
        guard !readerClass.readsPieces else { return }
        reading.fetcher.startFirstWindow(itemID: itemID, file: key)
    }

    /// Reads `count` bytes from `offset`; `answer` runs exactly once, on this thread or an
    /// engine thread where a large copy is fine. A read that must wait for bytes calls
    /// `onWait` first, with what cancels it (a FUSE interrupt).
    public func read(offset: Int64, count: Int, onWait: ((ReadCancellation) -> Void)? = nil,
                     answer reply: @escaping @Sendable (ReadAnswer) -> Void) {
        let answer: @Sendable (ReadAnswer) -> Void = { [self] result in
            if case .failure = result { return reply(result) }
            if answersTheVersionItDid() { return reply(result) }
            if !toldVersionChange.exchange(true, ordering: .relaxed) {
                reading.readFailed(itemID: itemID, message: "the origin's file changed while it was open: its reads fail (open it again)")
            }
            reply(.failure(FetchError(.originError, "\(path): the origin's file changed while it was open (open it again)")))
        }
        let wanted = offset + Int64(count)
        let learned = originSize.load(ordering: .relaxed)
        let end = (learned >= 0 ? learned : size).map { min(wanted, $0) } ?? wanted
        guard offset < end else { return answer(.bytes([])) }
        // Only a player's reads are playback: a backup, `file` or a thumbnailer must not start
        // a rental's play clock or move a resume point.
        playback?.read(offset: playbackOffset + offset, length: end - offset)
        let fetcher = reading.fetcher
        let range = ByteRange(baseOffset + offset, baseOffset + end)
        // Opened before its size was known (`direct_io`): a read past the end the engine has
        // learned since is the end of file.
        if size == nil, let known = fetcher.knownSize(itemID: itemID, file: key), range.start >= known {
            return answer(.bytes([]))
        }
        let (readAhead, continues, jumped) = pattern.withLock { ($0.read(offset: offset, end: end), $0.continues, $0.jumped) }
        if jumped { leaveReadAhead() }
        defer { prefetch(end: end, readAhead: readAhead) }
        if let bytes = available(range) { return answer(bytes) }
        // A thumbnailer or an indexer gets the uncached bytes `scanner-reads` allows, and an
        // error at once for the rest (it then describes the file from what it has).
        if readerClass == .scanner {
            guard let fetched = scannerFetch(offset..<end) else {
                return answer(.failure(FetchError(.unavailable, "beyond what policy scanner-reads allows a scanner")))
            }
            if fetched != offset..<end { fetchAhead(ByteRange(baseOffset + fetched.lowerBound, baseOffset + fetched.upperBound), length: .exact) }
        }
        // A read within the first window asks for all of it: the open's own fetch of the window
        // (`startFirstWindow`, after the open's reply) may not have started yet, and one request
        // then serves both.
        let firstWindow = readerClass.readsPieces ? 0 : fetcher.settings.firstWindow
        let cancellation = ReadCancellation()
        onWait?(cancellation)
        // A prober reading on where it stopped (`mediainfo`) gets no read-ahead, but its fetch
        // asks for the rest of the file and pauses at each read's end: its next read joins it
        // instead of a request (a round trip) per read. Not a scanner's: a stream that stops
        // leaves what was in flight (several MiB), and a scan of a library pays it per item.
        let length = continues && readerClass == .prober ? FetchLength.stream : readerClass.fetchLength
        waitFor(range, readAhead: max(readAhead, firstWindow - end), length: length, cancellation: cancellation, answer: answer)
    }

    /// Whether the file is still the version this open answered from (the first answer sets
    /// it). Only for opens of an item: the file's state stays while one is open.
    private func answersTheVersionItDid() -> Bool {
        guard locksItem, let (current, total) = reading.fetcher.version(itemID: itemID, file: key) else { return true }
        noteOriginSize(total)
        return answeredVersion.withLock { version in
            if let version { return version == current }
            version = current
            return true
        }
    }

    /// Tells, once, that the origin's media has another size (`total`) than this open was
    /// given: listings and later opens take it (`LibraryReader.originSizeDiffers`), and a
    /// front end with a kernel cache drops the size it holds before the answer that learned
    /// it goes out, so a reader at the old end asks the size again and reads on.
    private func noteOriginSize(_ total: Int64?) {
        guard key == "media", let size, let total, total != size,
              originSize.compareExchange(expected: -1, desired: total, ordering: .relaxed).exchanged else { return }
        pattern.withLock { $0.size = total }
        reading.originSizeDiffers(itemID: itemID, size: total)
    }

    /// The bytes of `range` if they can be answered now: from memory while they are still
    /// there (the file's copy may be on the disk only, written past the page cache), else
    /// from the cache file.
    private func available(_ range: ByteRange) -> ReadAnswer? {
        if let inMemory = reading.fetcher.bytesInMemory(itemID: itemID, file: key, range: range) { return .memory(inMemory) }
        guard reading.fetcher.isAvailable(itemID: itemID, file: key, range: range) else { return nil }
        return fromCacheFile(range)
    }

    /// Asks the fetcher for missing bytes; whichever of their arrival (or the fetcher's
    /// failure by the read bound) and a cancel comes first answers. A reader that rides out
    /// outages asks again, every `outageRetryInterval`, while the origin is out of reach,
    /// until its own bound (`outageTimeout`).
    private func waitFor(_ range: ByteRange, readAhead: Int64, length: FetchLength, cancellation: ReadCancellation,
                         answer: @escaping @Sendable (ReadAnswer) -> Void) {
        let once = AnswerOnce(answer)
        let large = range.count >= LibraryReader.largeAnswer
        let replies = reading.replies
        // The fetcher calls back on its transfer thread: a large answer (a copy of up to
        // 1 MiB into the kernel) there would hold up every transfer.
        let deliver: @Sendable (@escaping @Sendable () -> ReadAnswer) -> Void = { make in
            if large { replies.async { once(make()) } } else { once(make()) }
        }
        let bound = readerClass.ridesOutOutages ? reading.outageTimeout : reading.readTimeout
        ask(range, readAhead: readAhead, length: length, deadline: .now + bound, once: once, deliver: deliver,
            cancellation: cancellation)
    }

    private func ask(_ range: ByteRange, readAhead: Int64, length: FetchLength, deadline: ContinuousClock.Instant, once: AnswerOnce,
                     deliver: @escaping @Sendable (@escaping @Sendable () -> ReadAnswer) -> Void,
                     cancellation: ReadCancellation, retriedForSpace: Bool = false) {
        let retry = reading.outageRetryInterval
        let ticket = reading.fetcher.whenAvailable(
            itemID: itemID, file: key, range: range, readAhead: readAhead, length: length,
            deadline: deadline,
            // Once all of them have arrived, before they are in the cache file.
            bytes: { [self] bytes in
                reading.outages.answered(origin)
                deliver { .memory(bytes) }
            },
            completion: { [self] result in
                switch result {
                case .success:
                    reading.outages.answered(origin)
                    deliver { self.available(range) ?? self.fromCacheFile(range) }
                case .failure(let error) where asksAgain(after: error, retriedForSpace: retriedForSpace) && .now + retry < deadline:
                    // Out of space, the engine evicts streamed items meanwhile (`DiskRoom`):
                    // every reader asks once again, players and copiers until the read bound.
                    DispatchQueue.global().asyncAfter(deadline: .now() + CachedFile.dispatchInterval(retry)) { [self] in
                        guard !once.isDone else { return }
                        ask(range, readAhead: readAhead, length: length, deadline: deadline, once: once, deliver: deliver,
                            cancellation: cancellation, retriedForSpace: retriedForSpace || error.reason == .noSpace)
                    }
                case .failure(let error):
                    if error.reason == .noSpace, !toldNoSpace.exchange(true, ordering: .relaxed) {
                        reading.readFailed(itemID: itemID, message: "no room left on the library's disk to cache its bytes: reads fail until space is freed (offlinefs evicts only items nobody has open)")
                    }
                    once(.failure(error))
                }
            })
        cancellation.attach {
            ticket.cancel()
            once(.failure(FetchError(.cancelled, "the reader stopped waiting")))
        }
    }

    /// Whether a read that failed with `error` asks again: while the origin is out of reach
    /// (players and copiers, an outage younger than their bound), or once the engine has made
    /// room on a full disk.
    private func asksAgain(after error: FetchError, retriedForSpace: Bool) -> Bool {
        if error.reason == .noSpace { return !retriedForSpace || readerClass.ridesOutOutages }
        guard error.isOutage, let origin else { return false }
        return reading.outages.failed(origin) && readerClass.ridesOutOutages
    }

    /// `scheme://host:port` of the file's origin, whose outages readers share (`OriginOutages`).
    private var origin: String? {
        (try? reading.fetcher.cachedFile(itemID: itemID, key: key)).flatMap { ConnectionWarmer.originKey($0.origin.url) }.map(String.init)
    }

    /// A sequential reader jumped away (`ReadPattern.jumped`): its prefetches stop and, when
    /// nobody else has the item open, so do the fetches no waiter wants. On a slow link the
    /// read-ahead of the place a player left would take the link from the place it went
    /// (docs/transfers.md).
    private func leaveReadAhead() {
        for ticket in prefetches.withLock({ tickets in defer { tickets.removeAll() }; return tickets }) { ticket.cancel() }
        guard locksItem, reading.fetcher.readerCount(itemID: itemID) == 1 else { return }
        _ = (try? reading.fetcher.cachedFile(itemID: itemID, key: key))?.stopUnwantedFetches()
    }

    /// Asks early for the bytes a sequential reader will want next (`ReadPattern.prefetch`).
    /// Nobody waits on them: a failure shows at the read that needs them.
    private func prefetch(end: Int64, readAhead: Int64) {
        guard let next = pattern.withLock({ $0.prefetch(end: end, readAhead: readAhead) }) else { return }
        fetchAhead(ByteRange(baseOffset + next.lowerBound, baseOffset + next.upperBound), length: readerClass.fetchLength)
    }

    /// What a scanner's read of `read` (some of it not cached) fetches: the aligned
    /// `FetchSettings.scannerGranule` around it, within what `scanner-reads` allows without
    /// spending more than the open has left; nil when the policy refuses the read. Its reads
    /// are small and out of order (`gst-discoverer-1.0`: 300 B to 7 KiB), and each one that
    /// missed was a round trip of its own (docs/reads.md).
    private func scannerFetch(_ read: Range<Int64>) -> Range<Int64>? {
        let granule = reading.fetcher.settings.scannerGranule
        var fetched = read
        if granule > 1 {
            let alignedEnd = (read.upperBound + granule - 1) / granule * granule
            fetched = read.lowerBound / granule * granule..<min(alignedEnd, size ?? alignedEnd)
        }
        switch scannerReads {
        case nil, .allow?: return fetched
        case .cachedOnly?: return nil
        case .header?:
            // Within the first or the last MiB: the granule's part there.
            if let region = ScannerReads.headerRegion(holding: read, size: size) { return fetched.clamped(to: region) }
            // Elsewhere: the granule if the open can pay for it, else the read alone.
            let paid = scannerBytesLeft.load(ordering: .relaxed) >= Int64(fetched.count) ? fetched : read
            return scannerBytesLeft.subtract(Int64(paid.count), ordering: .relaxed).newValue < 0 ? nil : paid
        }
    }

    /// Asks for `range` ahead of the reads that will want it (their waits then join its
    /// fetch); cancelled at close.
    private func fetchAhead(_ range: ByteRange, length: FetchLength) {
        let fetcher = reading.fetcher
        guard !fetcher.isAvailable(itemID: itemID, file: key, range: range) else { return }
        // Done once the bytes have arrived (`bytes`), in the file yet or not: a prefetch must
        // not make the engine write a part-filled block early.
        let ticket = fetcher.whenAvailable(itemID: itemID, file: key, range: range, readAhead: 0,
                                           length: length, deadline: .now + reading.readTimeout,
                                           bytes: { _ in }, completion: { _ in })
        prefetches.withLock { tickets in
            tickets.append(ticket)
            if tickets.count > 2 { tickets.removeFirst() }
        }
    }

    /// The region of the cache file when the size is known (a page-cache read must be
    /// answered in full), else the bytes copied, short at the end (`direct_io`).
    private func fromCacheFile(_ range: ByteRange) -> ReadAnswer {
        // From the readers' pool, not one of its own: programs may hold thousands of item
        // files open, and the mount must not run out of descriptors for them.
        let key = CacheDescriptors.Key(file: ObjectIdentifier(self), direct: false)
        let borrowed: BorrowedDescriptor
        do {
            let fd = try reading.descriptors.borrow(key) { [path] () throws(CacheFileError) -> Int32 in
                let fd = open(path, O_RDONLY | O_CLOEXEC)
                guard fd >= 0 else { throw CacheFileError(errno: errno, operation: "cannot open", path: path) }
                return fd
            }
            borrowed = BorrowedDescriptor(fd, key: key, pool: reading.descriptors, reader: self)
        } catch {
            return .failure(FetchError(.cacheWriteFailed, error.description, reason: error.isOutOfDescriptors ? .outOfDescriptors : nil))
        }
        if size != nil { return .cacheFile(CacheFileRegion(offset: range.start, count: Int(range.count), borrowed: borrowed)) }
        var buffer = [UInt8](repeating: 0, count: Int(range.count))
        let count = buffer.withUnsafeMutableBytes { pread(borrowed.fd, $0.baseAddress, $0.count, off_t(range.start)) }
        guard count >= 0 else {
            return .failure(FetchError(.cacheWriteFailed, "cannot read \(path): \(String(cString: strerror(errno)))"))
        }
        buffer.removeLast(buffer.count - count)
        return .bytes(buffer)
    }
}

/// One version of a file: its state in memory, and the generation the origin's version
/// gave it (`CachedFileState.startNewGeneration`).
struct FileVersion: Equatable {
    let file: ObjectIdentifier
    let generation: Int
}

/// What readers and the scheduler ask of a file in memory, without a store read (nil when
/// the file is not in memory).
extension RangeFetcher {
    private func fileInMemory(itemID: Int64, key: CacheFileKey) -> CachedFile? {
        files.withLock { $0.peek(.init(itemID: itemID, key: key)) }
    }

    /// The file's size if the origin has told it.
    func knownTotal(itemID: Int64, file key: CacheFileKey) -> Int64? {
        fileInMemory(itemID: itemID, key: key)?.state.withLock { $0.total }
    }

    /// The version of the file, and its size if the origin has told it.
    func version(itemID: Int64, file key: CacheFileKey) -> (FileVersion, total: Int64?)? {
        fileInMemory(itemID: itemID, key: key).map { file in
            let (generation, total) = file.state.withLock { ($0.generation, $0.total) }
            return (FileVersion(file: ObjectIdentifier(file), generation: generation), total)
        }
    }
}

/// Calls its answer once; later calls do nothing.
private final class AnswerOnce: Sendable {
    private let answer: @Sendable (ReadAnswer) -> Void
    private let done = Atomic<Bool>(false)

    init(_ answer: @escaping @Sendable (ReadAnswer) -> Void) {
        self.answer = answer
    }

    var isDone: Bool { done.load(ordering: .acquiring) }

    func callAsFunction(_ value: ReadAnswer) {
        guard !done.exchange(true, ordering: .acquiringAndReleasing) else { return }
        answer(value)
    }
}
