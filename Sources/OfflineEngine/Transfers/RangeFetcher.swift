import CSystemShim
import Dispatch
public import Foundation
public import OfflineHTTP
public import OfflineStore
import Synchronization

/// "Give me bytes [a, b) of item X": answered from the cache file, or fetched from the origin
/// with range requests into it. The one byte source of the engine: the FUSE mount reads
/// through it, and a whole-file download is the same mechanism asking for every missing byte.
///
/// - Concurrent requests for overlapping bytes share one transfer; a request far ahead of a
///   running transfer starts its own range (see `FetchSettings.nearBytes`).
/// - Waiters are told as soon as bytes are written (before they are flushed); the flusher
///   makes them durable and claims them in the store in batches.
/// - After a crash only committed ranges are trusted (`CachedFile.init`).
///
/// Lock order: `sideFileStarts` → `files` → `CachedFile`'s locks → `sideFileLinks`;
/// `files` → `readers`, `MediaOriginIndex`'s (leaves).
/// Nothing is called back under `files`.
public final class RangeFetcher: Sendable {
    public let cacheFolder: URL
    private let cacheFolderPath: String
    private let loop: TransferLoop
    let index: any CacheIndex
    /// Origins of uncached media, so that a first open needs no store read (nil: always read).
    private let mediaOrigins: MediaOriginIndex?
    /// Bumped by merges that may move URLs: idle files loaded before are loaded again.
    private let catalogChanges: CatalogChanges?
    let settings: FetchSettings
    private let flusher = Flusher()
    /// The cache files' descriptors, a bounded number of them (`CacheDescriptors`).
    private let descriptors: CacheDescriptors
    /// The disk space cache writes leave to the store (`FetchSettings.keepFree`); tells the
    /// engine when a write found none (`DiskRoom.onShortage`).
    let room: DiskRoom
    /// Opens connections ahead of reads a listing suggests (nil: `connectionWarmInterval` is off).
    private let warmer: ConnectionWarmer?
    /// Items of a folder listed before the warm-up started (`expectReads`).
    private let expectedReads = Mutex<(warmUpStarted: Bool, itemIDs: [Int64])>((false, []))
    /// Memory that arriving bytes gather in before they go to the cache files (`StagingBlock`).
    private let staging: StagingPool?
    /// Writes full staging blocks to their files, one at a time, off the transfer thread.
    private let blockWrites = DispatchQueue(label: "offlinefs.block-writes")
    private let warmingUp = DispatchGroup()
    private let callbacks = DispatchQueue(label: "offlinefs.fetch-callbacks")
    /// Where `learnSizes` waits for its HEAD answers (blocking, off the transfer loop).
    let sizeProbes = DispatchQueue(label: "offlinefs.size-probes", attributes: .concurrent)
    /// The files being read or fetched, and a few idle ones (`CachedFileTable`).
    let files: Mutex<CachedFileTable>
    /// How many readers have each item open.
    private let readers = Mutex<[Int64: Int]>([:])
    private let completionHandlers = Mutex<[@Sendable (Int64, CacheFileKey) -> Void]>([])
    private let playbackStarter = Mutex<(@Sendable (_ itemID: Int64, _ size: Int64?) -> PlaybackSession)?>(nil)
    private let closeHandlers = Mutex<[@Sendable (Int64) -> Void]>([])
    /// Held while a side file is linked to another item's copy, or a file's bytes are
    /// discarded, so a copy is never linked while its bytes go (`linkWholeSideFile`).
    let sideFileLinks = Mutex(())
    /// Held while the first read of an empty side file finds another item's fetch of its URL
    /// or starts its own (`startingSideFile`).
    let sideFileStarts = Mutex(())

    /// Cache files live in `<library>/cache/<item id>/<file>`.
    /// HLS items' files are fetched from the URLs of their chosen rendition in `hls`.
    public convenience init(store: LibraryStore, loop: TransferLoop, settings: FetchSettings = FetchSettings(),
                            hls: HLSStreams? = nil) {
        self.init(cacheFolder: CacheLayout.cacheFolder(library: store.folder),
                  index: StoreCacheIndex(store: store, hls: hls), mediaOrigins: MediaOriginIndex(store: store),
                  catalogChanges: store.catalogChanges, loop: loop, settings: settings)
    }

    init(cacheFolder: URL, index: any CacheIndex, mediaOrigins: MediaOriginIndex? = nil,
         catalogChanges: CatalogChanges? = nil, loop: TransferLoop, settings: FetchSettings) {
        self.cacheFolder = cacheFolder
        cacheFolderPath = cacheFolder.path
        self.index = index
        self.mediaOrigins = mediaOrigins
        self.catalogChanges = catalogChanges
        self.loop = loop
        self.settings = settings
        files = Mutex(CachedFileTable(idleKept: settings.idleFilesKept))
        descriptors = CacheDescriptors(capacity: CacheDescriptors.capacity(fitting: settings.cacheDescriptors))
        room = DiskRoom(keepFree: settings.keepFree)
        staging = settings.stagingBlocks > 0 ? StagingPool(capacity: settings.stagingBlocks) : nil
        warmer = settings.connectionWarmInterval.map { ConnectionWarmer(loop: loop, interval: $0, timeouts: settings.timeouts) }
    }

    /// Starts the flusher's thread now instead of at the first flush, and warms up the read
    /// path on a thread of its own (it reads the store). Only once forking is over.
    public func startThreads() {
        flusher.start()
        warmingUp.enter()
        let listed = expectedReads.withLock { expected -> [Int64] in
            expected.warmUpStarted = true
            defer { expected.itemIDs = [] }
            return expected.itemIDs
        }
        Thread { [self] in
            csystem_name_this_thread("ofs-warm-up")
            warmUp()
            warmConnections(for: listed)
            warmingUp.leave()
        }.start()
    }

    /// Blocks until the warm-up `startThreads` started has ended (tests, benchmarks).
    public func waitForWarmUp() {
        warmingUp.wait()
    }

    /// Makes the cache folder, which the first cache file would otherwise make, reads the
    /// origins of uncached media (`MediaOriginIndex`: a first open then needs no store read)
    /// and readies a staging block, so a mount's first reader does not wait for these.
    private func warmUp() {
        mkdir(cacheFolderPath, 0o755)
        staging?.prepareBlock()
        mediaOrigins?.load()
    }

    /// Stops every transfer and flushes what was written. The transfer loop is the caller's.
    public func shutdown() {
        warmingUp.wait()
        let all = files.withLock { $0.all }
        for file in all { file.cancelAll(FetchError(.cancelled, "the engine is stopping")) }
        blockWrites.sync {}  // full blocks queued for their write are in the files
        for file in all { file.flush() }
        flusher.stop()
    }

    // MARK: - Reading (`LibraryReader`)

    /// The sparse cache file that holds (or will hold) the file's bytes.
    public func cacheFilePath(itemID: Int64, file: CacheFileKey) -> String {
        CacheLayout.filePath(cacheFolderPath: cacheFolderPath, itemID: itemID, file: file)
    }

    /// True when every byte of `range` can be read from the cache file now. Memory only.
    public func isAvailable(itemID: Int64, file: CacheFileKey, range: ByteRange) -> Bool {
        guard let cached = try? cachedFile(itemID: itemID, key: file) else { return false }
        return cached.isAvailable(range.start..<range.end)
    }

    /// Calls `completion` once `range` can be read from the cache file (possibly before its
    /// bytes are flushed), or with an error when they cannot be had by `deadline`; fetches
    /// what is missing, and `readAhead` more bytes in the same transfer (sequential readers);
    /// a fetch it starts asks for `length`.
    ///
    /// With `bytes`: when all of `range` (cut at the end of the file) has arrived and is
    /// still in memory, `bytes` gets it instead, in the file yet or not, and `completion` is
    /// not called. A reader at the edge of a stream then never makes the engine write a
    /// part-filled block early. Exactly one of the two runs, once, on an engine thread (the
    /// transfer's own: a long task belongs elsewhere). Never blocks the caller.
    @discardableResult
    public func whenAvailable(
        itemID: Int64, file: CacheFileKey, range: ByteRange, readAhead: Int64,
        length: FetchLength = .streamWhenLarge, deadline: ContinuousClock.Instant, forDownload: Bool = false,
        bytes: (@Sendable (BytesInMemory) -> Void)? = nil,
        completion: @escaping @Sendable (Result<Void, FetchError>) -> Void
    ) -> any FetchTicket {
        let cached: CachedFile
        do {
            cached = try fileToRead(itemID: itemID, key: file)
        } catch {
            callbacks.async { completion(.failure(error)) }
            return Ticket(file: nil, waiterID: nil)
        }
        return startingSideFile(cached) { copy in
            // Another item fetches this file's URL: once it has the bytes this read wants, its
            // copy is linked here if whole (else this file fetches what is missing). Not all of
            // it: with its size unknown that would start a second request past its first window.
            let id = copy.request(range.start..<range.end, readAhead: 0, deadline: deadline) { [self] _ in
                DispatchQueue.global().async { [self] in
                    takeCopy(into: cached)
                    _ = cached.request(range.start..<range.end, readAhead: readAhead, deadline: deadline,
                                       length: length, forDownload: forDownload, bytes: bytes, completion: completion)
                }
            }
            return Ticket(file: copy, waiterID: id)
        } orFetching: {
            let id = cached.request(range.start..<range.end, readAhead: readAhead, deadline: deadline, length: length,
                                    forDownload: forDownload, bytes: bytes, completion: completion)
            return Ticket(file: cached, waiterID: id)
        }
    }

    /// The bytes of `range` if they are all still in memory (they arrived moments ago; the
    /// file's copy may be on the disk only, written past the page cache), else nil.
    public func bytesInMemory(itemID: Int64, file: CacheFileKey, range: ByteRange) -> BytesInMemory? {
        files.withLock { $0.peek(FileID(itemID: itemID, key: file)) }?.bytesInMemory(range.start..<range.end)
    }

    /// True when every byte of `range` is in the cache file, after writing out those that
    /// have all arrived but still wait in memory (a file just streamed in whole: an open that
    /// would hand the file to the kernel waits the few milliseconds that takes). May block on
    /// local disk writes, never on the network.
    public func isWhole(itemID: Int64, file: CacheFileKey, range: ByteRange) -> Bool {
        guard let cached = try? cachedFile(itemID: itemID, key: file) else { return false }
        let bytes = range.start..<range.end
        if cached.isAvailable(bytes) { return true }
        guard cached.hasArrived(bytes) else { return false }
        cached.writeOutStaged()
        return cached.isAvailable(bytes)
    }

    /// A reader opened the file and will most likely read its start next (players, `file`,
    /// `cat` all do): its first bytes are fetched now, while the open is answered. Never
    /// waits on the network; a failure shows at the read that needs the bytes.
    public func startFirstWindow(itemID: Int64, file: CacheFileKey) {
        guard let cached = try? fileToRead(itemID: itemID, key: file) else { return }
        let window = 0..<settings.firstWindow
        guard !cached.isAvailable(window) else { return }
        startingSideFile(cached) { _ in
            // The first read waits for the other item's fetch.
        } orFetching: {
            // Nobody waits on these bytes (the first read will): no deadline, nothing to answer.
            // Asked for exactly: an open-ended request lets a fast origin push megabytes in one
            // burst, and on a shared CPU the first bytes wait behind it. A reader that goes on
            // streams from where the window ends (`plan`).
            _ = cached.request(window, readAhead: 0, deadline: nil, length: .exact) { _ in }
        }
    }

    /// A folder holding these items was listed, and a program may read one of them next: a
    /// connection to the origin of their media is opened soon, at most once per origin in a
    /// while, so that the first read does not wait for one. Returns at once; items already
    /// cached or being read count for nothing.
    public func expectReads(itemIDs: [Int64]) {
        guard warmer != nil, mediaOrigins != nil else { return }
        // Not before the warm-up, which reads the origins of uncached media: a mount's first
        // listing often comes before it started. The latest listing stands for what follows.
        let started = expectedReads.withLock { expected -> Bool in
            if !expected.warmUpStarted { expected.itemIDs = itemIDs }
            return expected.warmUpStarted
        }
        guard started else { return }
        warmingUp.notify(queue: .global(qos: .utility)) { [self] in warmConnections(for: itemIDs) }
    }

    /// `expectReads`' work, on an engine thread; how many warm-ups it started.
    @discardableResult
    func warmConnections(for itemIDs: [Int64]) -> Int {
        guard let warmer, let mediaOrigins else { return 0 }
        var started = 0
        for itemID in itemIDs {
            // Only media nobody touched yet: a file the fetcher holds is cached or being read.
            guard files.withLock({ $0.peek(FileID(itemID: itemID, key: "media")) }) == nil,
                  let origin = mediaOrigins.origin(itemID: itemID) else { continue }
            if warmer.warm(origin) { started += 1 }
        }
        return started
    }

    /// Connection warm-ups that have ended (tests).
    var connectionWarmUpsFinished: Int { warmer?.finishedCount ?? 0 }

    /// The file's size once the origin has told it (possibly before every byte is here).
    public func knownSize(itemID: Int64, file: CacheFileKey) -> Int64? {
        (try? cachedFile(itemID: itemID, key: file))?.progress.total
    }

    /// A reader opened / closed the item: an open item is locked against eviction, and its
    /// last close stops the fetches nobody else wants.
    public func readerOpened(itemID: Int64) {
        readers.withLock { $0[itemID, default: 0] += 1 }
    }

    public func readerClosed(itemID: Int64) {
        let last = readers.withLock { readers -> Bool in
            let left = (readers[itemID] ?? 1) - 1
            readers[itemID] = left > 0 ? left : nil
            return left <= 0
        }
        guard last else { return }
        for file in files.withLock({ $0.files(of: itemID) }) {
            file.dropRecentBlocks()
            // A transfer cut short loses its connection (HTTP/1.1): its replacement opens now,
            // not at the next read of that origin (a player moving on to the next episode).
            if file.stopUnwantedFetches() { warmer?.warm(file.origin, replacing: true) }
        }
        for handler in closeHandlers.withLock({ $0 }) { handler(itemID) }
    }

    /// A player opened the item's media (`size` bytes; nil for a piece of an HLS stream): the
    /// session is told its reads and ended at the last close (docs/playback.md). Nil: nobody
    /// tracks playback.
    public func startPlayback(itemID: Int64, size: Int64?) -> PlaybackSession? {
        playbackStarter.withLock { $0 }?(itemID, size)
    }

    /// Makes the sessions `startPlayback` gives (the engine's `PlayTracker`).
    public func onPlayback(_ start: @escaping @Sendable (_ itemID: Int64, _ size: Int64?) -> PlaybackSession) {
        playbackStarter.withLock { $0 = start }
    }

    /// Calls `handler` when the last reader of an item closes it (a delete waiting for it).
    public func onLastReaderClosed(_ handler: @escaping @Sendable (_ itemID: Int64) -> Void) {
        closeHandlers.withLock { $0.append(handler) }
    }

    /// Whether a reader has the item open (it must not be evicted), and how many have.
    public func isOpen(itemID: Int64) -> Bool { readerCount(itemID: itemID) > 0 }
    func readerCount(itemID: Int64) -> Int { readers.withLock { $0[itemID] ?? 0 } }

    /// Whether the fetcher holds the state of the item's file now (tests).
    func holds(itemID: Int64, file: CacheFileKey) -> Bool {
        files.withLock { $0.peek(FileID(itemID: itemID, key: file)) } != nil
    }

    /// Cache file descriptors open now (tests).
    var openCacheDescriptors: Int { descriptors.openCount }

    /// Staging blocks made so far, in use or free (tests).
    var stagingBlocksAllocated: Int { staging?.allocatedBlocks ?? 0 }

    /// The fetches filling a file now: where each will write next and whether it is paused
    /// for its reader (tests; `CachedFileState.plan`).
    func fetchPositions(itemID: Int64, file: CacheFileKey) -> [(cursor: Int64, paused: Bool)] {
        guard let cached = files.withLock({ $0.peek(FileID(itemID: itemID, key: file)) }) else { return [] }
        return cached.state.withLock { s in
            s.fetches.values.sorted { $0.start < $1.start }.map { (cursor: $0.cursor, paused: $0.paused) }
        }
    }

    // MARK: - For downloads and the scheduler

    /// Bytes written, bytes durable, and the file's size when known.
    public func progress(itemID: Int64, file: CacheFileKey) -> (written: Int64, committed: Int64, total: Int64?) {
        guard let cached = try? cachedFile(itemID: itemID, key: file) else { return (0, 0, nil) }
        let progress = cached.progress
        return (progress.written, progress.committed, progress.total)
    }

    /// Flushes and claims every byte written so far. Blocking: not on the cooperative pool.
    /// - Returns: the file's size when every byte of it is now durable, nil otherwise.
    public func flush(itemID: Int64, file: CacheFileKey) throws(FetchError) -> Int64? {
        let cached = try cachedFile(itemID: itemID, key: file)
        if let error = cached.flush() { throw error }
        guard cached.isCompletelyCommitted == true else { return nil }
        return cached.progress.total
    }

    /// `flush(itemID:file:)` for several files of an item, claimed in one store transaction.
    /// Blocking. - Returns: per file, its size when every byte is durable, else nil, or its error.
    public func flush(itemID: Int64, files keys: [CacheFileKey]) -> [CacheFileKey: Result<Int64?, FetchError>] {
        var results: [CacheFileKey: Result<Int64?, FetchError>] = [:]
        var opened: [CachedFile] = []
        for key in keys {
            do { opened.append(try cachedFile(itemID: itemID, key: key)) } catch { results[key] = .failure(error) }
        }
        for (file, error) in zip(opened, CachedFile.flush(opened)) {
            if let error {
                results[file.key] = .failure(error)
            } else {
                results[file.key] = .success(file.isCompletelyCommitted == true ? file.progress.total : nil)
            }
        }
        return results
    }

    /// Lowercase hex SHA-256 of the first `length` bytes of the cache file. Blocking.
    public func sha256(itemID: Int64, file: CacheFileKey, length: Int64) throws(FetchError) -> String {
        let cached = try cachedFile(itemID: itemID, key: file)
        do {
            return try cached.file.sha256(length: length)
        } catch {
            throw FetchError(.cacheWriteFailed, "cannot read back \(cached.file.path): \(error)")
        }
    }

    /// Frees what a failed write left unclaimed and allows writes again (see
    /// `CachedFile.recoverFromWriteFailure`).
    public func recoverFromWriteFailure(itemID: Int64, file: CacheFileKey) {
        try? cachedFile(itemID: itemID, key: file).recoverFromWriteFailure()
    }

    /// Stops every transfer of the item; waiters fail with `.cancelled`.
    public func cancel(itemID: Int64) {
        let matching = files.withLock { $0.files(of: itemID) }
        for file in matching { file.cancelAll(FetchError(.cancelled, "transfers of item \(itemID) cancelled")) }
    }

    /// Calls `handler` after bytes were claimed in the store by the flusher (what programs
    /// stream among them): the cache may have grown past a limit.
    public func onBytesClaimed(_ handler: @escaping @Sendable () -> Void) {
        flusher.onFlushed(handler)
    }

    /// Calls `handler` whenever a file's last missing bytes are flushed and claimed, whether a
    /// download or a reader fetched them (so a streamed item can become `cached`).
    public func onFileCompleted(_ handler: @escaping @Sendable (_ itemID: Int64, _ file: CacheFileKey) -> Void) {
        completionHandlers.withLock { $0.append(handler) }
    }

    /// The pages a download wrote through the page cache leave it once the flush that
    /// completes the file has synced them: a download of gigabytes would otherwise push out
    /// the memory of the programs the user runs, and those small scattered pages read slower
    /// than the kernel's read-ahead from the disk (docs/transfers.md). Blocks written past the
    /// page cache (`O_DIRECT`, the usual way) leave none. While a reader has the item open, the
    /// newest flushes' pages stay for it. The pages readers brought in stay (a file read again
    /// just after its download ended reads from memory); only at completion.
    private func fileCompleted(_ file: CachedFile) {
        // Handlers first: a completed download's checksum is read from these pages.
        for handler in completionHandlers.withLock({ $0 }) { handler(file.itemID, file.key) }
        let open = isOpen(itemID: file.itemID)
        file.file.releaseWrittenPages(keeping: open ? file.recentlyFlushedRanges : [])
        if !open { file.dropRecentBlocks() }
    }

    // MARK: - Files

    private typealias FileID = CachedFileTable.FileID

    func cachedFile(itemID: Int64, key: CacheFileKey) throws(FetchError) -> CachedFile {
        let id = FileID(itemID: itemID, key: key)
        let generation = catalogChanges?.generation ?? 0
        let (cached, dropped) = try files.withLock { files throws(FetchError) -> (CachedFile, [CachedFile]) in
            if let existing = files.use(id, generation: generation, isPinned: isOpen(itemID:)) { return (existing, []) }
            let cached = try makeCachedFile(id)
            files.insert(cached, as: id, generation: generation)
            let dropped = files.dropIdleFiles(isPinned: isOpen(itemID:))
            for file in dropped where file.key == "media" { mediaOrigins?.forget(itemID: file.itemID) }
            return (cached, dropped)
        }
        // Their descriptors close as they go, outside the lock (unless a late callback still
        // holds one; it then goes with that).
        withExtendedLifetime(dropped) {}
        return cached
    }

    /// A file's cache, from what the store holds of it. Under `files`.
    private func makeCachedFile(_ id: FileID) throws(FetchError) -> CachedFile {
        let (itemID, key) = (id.itemID, id.key)
        let stored: StoredCacheFile?
        do {
            if key == "media", let origin = mediaOrigins?.origin(itemID: itemID) {
                // What the store read would say of it: no version known, no byte claimed.
                stored = StoredCacheFile(origin: origin, validator: nil, ranges: [])
            } else {
                stored = try index.load(itemID: itemID, file: key)
            }
        } catch {
            throw FetchError(.noSuchItem, "cannot read item \(itemID): \(error)")
        }
        guard var stored else { throw FetchError(.noSuchItem, "item \(itemID) has no \(key) to fetch") }
        if let linked = linkWholeSideFile(stored, itemID: itemID, key: key) { stored = linked }
        do {
            return try CachedFile(
                itemID: itemID, key: key, stored: stored, path: cacheFilePath(itemID: itemID, file: key),
                descriptors: descriptors, room: room, loop: loop, index: index, settings: settings, flusher: flusher, callbacks: callbacks,
                staging: staging, blockWrites: blockWrites, onCompletelyCommitted: { [weak self] file in self?.fileCompleted(file) })
        } catch {
            throw CachedFile.writeFailure(error, path: cacheFilePath(itemID: itemID, file: key))
        }
    }

    /// Holds its file weakly: a reader may keep its ticket after the read is answered, and
    /// must not keep the file (and its descriptors) meanwhile.
    private struct Ticket: FetchTicket {
        weak var file: CachedFile?
        let waiterID: Int?

        func cancel() {
            guard let file, let waiterID else { return }
            file.endWait(waiterID, FetchError(.cancelled, "the reader stopped waiting"))
        }
    }
}
