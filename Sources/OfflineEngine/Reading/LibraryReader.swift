import Dispatch
import Foundation
import Synchronization

/// How a front end (the FUSE mount) reads a library's item files: opening one gives an
/// `ItemFileReader`, and whether its reads may bypass the front end. The engine decides what
/// to fetch; the front end only turns requests into calls and answers into replies.
public final class LibraryReader: Sendable {
    let fetcher: RangeFetcher
    let view: LibraryView
    let readTimeout: Duration
    /// Where large answers of reads that waited are sent from, off the transfer thread.
    /// Concurrent: each answer is a copy into its reader's pages, and with several readers
    /// one serial queue did all of their copies on one core.
    let replies = DispatchQueue(label: "offlinefs.read-replies", attributes: .concurrent)
    /// Answers from this size on leave the transfer thread (a small one costs less than the hop).
    static let largeAnswer: Int64 = 256 << 10
    /// The cache-file descriptors readers read from: a bounded number kept open between reads
    /// (least recently used closed first), so item files held open cost no descriptor each.
    let descriptors = CacheDescriptors(capacity: CacheDescriptors.capacity(fitting: 64))
    /// Items whose media was wholly in the cache at their last open (`MediaOpen.pagesStayValid`).
    private let wholeAtLastOpen = Mutex<Set<Int64>>([])  // leaf lock
    private let sizeWatchers = Mutex<[@Sendable (Int64) -> Void]>([])  // leaf lock

    /// The read bound of readers that ride out outages (`ReaderClass.ridesOutOutages`).
    let outageTimeout: Duration
    let outages: OriginOutages
    /// How often a player's or a copier's read asks again while the origin is out of reach.
    let outageRetryInterval: Duration

    /// - Parameters:
    ///   - readTimeout: the read bound: a read whose bytes neither are here nor arrive within
    ///     it fails.
    ///   - outageTimeout: the same bound for players, transcoders and copiers, which ask again
    ///     meanwhile (never shorter than `readTimeout`).
    public init(fetcher: RangeFetcher, view: LibraryView, readTimeout: Duration, outageTimeout: Duration? = nil,
                outageRetryInterval: Duration = .seconds(1)) {
        self.fetcher = fetcher
        self.view = view
        self.readTimeout = readTimeout
        self.outageTimeout = max(readTimeout, outageTimeout ?? readTimeout)
        outages = OriginOutages(bound: self.outageTimeout)
        self.outageRetryInterval = outageRetryInterval
    }

    /// An open of an item's media.
    public struct MediaOpen: Sendable {
        public let reader: ItemFileReader
        /// Every byte is in the cache file (`cacheFilePath`).
        public let whole: Bool
        /// Reads need not reach the engine (none is watched: not a player's, and no rental's
        /// play clock waits for them): they may be passed through to the cache file, or
        /// answered from pages the kernel kept.
        public let mayBypass: Bool
        /// The kernel's pages of the file, if it kept any, hold the bytes the cache file holds
        /// now: the item is cached, or was whole at its last open too (a file streamed in whole
        /// reads again from memory before it is marked cached). The first open that finds it
        /// whole drops them: they may be of a version fetched before.
        public let pagesStayValid: Bool
        public let cacheFilePath: String
    }

    /// Opens item `itemID`'s media (`size` bytes, or the origin's if the engine learned
    /// another; `isCached`: its state is `cached`) for a reader of `readerClass`.
    public func openMedia(itemID: Int64, size catalogSize: Int64, isCached: Bool, hasLicenceExpiry: Bool,
                          readerClass: ReaderClass) -> MediaOpen {
        // An earlier reader learned it (kept with the cached bytes), and the listing shows
        // it, while the catalog's may still be the feed's: a read must not end there. A
        // cached item's size is the origin's already.
        let size = isCached ? catalogSize : fetcher.knownSize(itemID: itemID, file: "media") ?? catalogSize
        let whole = isCached
            || (size > 0 && fetcher.isWhole(itemID: itemID, file: "media", range: ByteRange(0, size)))
        // A player's reads say where it is (docs/playback.md): they must reach the engine.
        let mayBypass = readerClass != .player && !(hasLicenceExpiry && view.playClockWaitsForReads(itemID: itemID))
        let wasWhole = wholeAtLastOpen.withLock { items -> Bool in
            guard whole else {
                items.remove(itemID)
                return false
            }
            return !items.insert(itemID).inserted
        }
        let reader = ItemFileReader(
            reading: self, itemID: itemID, key: "media", size: size, readerClass: readerClass,
            playback: readerClass == .player ? fetcher.startPlayback(itemID: itemID, size: size) : nil,
            scannerReads: readerClass == .scanner ? view.scannerReads() : nil, locksItem: true)
        return MediaOpen(reader: reader, whole: whole, mayBypass: mayBypass, pagesStayValid: (isCached || wasWhole) && mayBypass,
                         cacheFilePath: fetcher.cacheFilePath(itemID: itemID, file: "media"))
    }

    /// Opens a side file (`thumbnail`, `subtitle.<lang>`): its size once it is wholly cached
    /// (`sideFileSize`), else nil (the reader learns the end from short answers).
    public func openSideFile(itemID: Int64, key: CacheFileKey, readerClass: ReaderClass) -> ItemFileReader {
        ItemFileReader(reading: self, itemID: itemID, key: key, size: sideFileSize(itemID: itemID, key: key),
                       readerClass: readerClass, playback: nil, scannerReads: nil, locksItem: false)
    }

    /// Opens a part of an HLS stream: cache file `key` from `baseOffset` (a byte-range part),
    /// `size` bytes when known. `playbackOffset`: where the part starts in the stream's
    /// playback (nil: reading it is not playback, like a key's); a player's session does not
    /// know the stream's size.
    public func openPart(itemID: Int64, key: CacheFileKey, size: Int64?, baseOffset: Int64, playbackOffset: Int64?,
                         readerClass: ReaderClass) -> ItemFileReader {
        let playback = playbackOffset != nil && readerClass == .player
            ? fetcher.startPlayback(itemID: itemID, size: nil) : nil
        return ItemFileReader(reading: self, itemID: itemID, key: key, size: size, baseOffset: baseOffset,
                              playbackOffset: playbackOffset ?? 0, readerClass: readerClass, playback: playback,
                              scannerReads: nil, locksItem: true)
    }

    /// A player's playback of a stream read through another file (an HLS one-file view).
    public func startPlayback(itemID: Int64, size: Int64?, readerClass: ReaderClass) -> PlaybackSession? {
        readerClass == .player ? fetcher.startPlayback(itemID: itemID, size: size) : nil
    }

    /// An open that is not an `ItemFileReader` (an HLS playlist or key in memory) locks the
    /// item against eviction as one does, until `closedItem`.
    public func openedItem(itemID: Int64) { fetcher.readerOpened(itemID: itemID) }
    public func closedItem(itemID: Int64) { fetcher.readerClosed(itemID: itemID) }
    /// The origin's file has another size than the item's: the store takes the origin's (off
    /// the caller's thread: a read's answer, a FUSE release), so listings and later opens are
    /// not cut short; the watchers hear it first, on this thread.
    func originSizeDiffers(itemID: Int64, size: Int64) {
        for watcher in sizeWatchers.withLock({ $0 }) { watcher(itemID) }
        let view = view
        DispatchQueue.global(qos: .utility).async { view.correctSize(itemID: itemID, originSize: size) }
    }

    /// An open's reads fail (the origin's file changed under it, the disk is full): its
    /// program only gets an errno; the event log says why (off the caller's thread: a read's
    /// answer).
    func readFailed(itemID: Int64, message: String) {
        let view = view
        DispatchQueue.global(qos: .utility).async { view.recordReadFailure(itemID: itemID, message: message) }
    }

    /// Calls `watcher` when a reader learns that the origin's media of an item has another
    /// size than the one its open was given, before that reader's answer: a front end drops
    /// what it cached of the old size (the store's catches up moments later).
    public func onOriginSize(_ watcher: @escaping @Sendable (_ itemID: Int64) -> Void) {
        sizeWatchers.withLock { $0.append(watcher) }
    }

    /// The size of the item's media the origin told, if the engine holds it (it wins over
    /// the catalog's, which the store takes moments later).
    public func originMediaSize(itemID: Int64) -> Int64? {
        fetcher.knownTotal(itemID: itemID, file: "media")
    }

    /// Whether a reader has the item open (locked against eviction meanwhile).
    public func isOpen(itemID: Int64) -> Bool { fetcher.isOpen(itemID: itemID) }

    /// The item's media was evicted or changed: pages the kernel kept of it are stale.
    public func forgetPages(itemID: Int64) {
        wholeAtLastOpen.withLock { _ = $0.remove(itemID) }
    }

    /// A folder of these items was listed (`RangeFetcher.expectReads`).
    public func expectReads(itemIDs: [Int64]) {
        fetcher.expectReads(itemIDs: itemIDs)
    }

    /// A side file's size once it is wholly in the cache, else nil: the total the engine
    /// learned from the origin, when every byte of it is present. (The cache file's length
    /// does not say: after a read of its start only, it ends where that read ended.)
    public func sideFileSize(itemID: Int64, key: CacheFileKey) -> Int64? {
        guard let total = fetcher.knownSize(itemID: itemID, file: key), total > 0,
              fetcher.isAvailable(itemID: itemID, file: key, range: ByteRange(0, total)) else { return nil }
        return total
    }

    /// The file's size once the origin has told it, else nil.
    public func knownSize(itemID: Int64, key: CacheFileKey) -> Int64? {
        fetcher.knownSize(itemID: itemID, file: key)
    }

    /// Asks the origin the sizes not known yet (`RangeFetcher.learnSizes`).
    public func learnSizes(itemID: Int64, keys: [CacheFileKey], completion: @escaping @Sendable () -> Void) {
        fetcher.learnSizes(itemID: itemID, files: keys, completion: completion)
    }

    /// Whether every byte of `range` of the cache file is there now.
    public func isAvailable(itemID: Int64, key: CacheFileKey, range: ByteRange) -> Bool {
        fetcher.isAvailable(itemID: itemID, file: key, range: range)
    }

    public func cacheFilePath(itemID: Int64, key: CacheFileKey) -> String {
        fetcher.cacheFilePath(itemID: itemID, file: key)
    }

    /// Calls `completion` once the first byte of cache file `key` is here (its size then
    /// known), or fails by the read bound; cancellable.
    public func whenStarted(itemID: Int64, key: CacheFileKey, cancellation: ReadCancellation,
                            completion: @escaping @Sendable (Bool) -> Void) {
        let ticket = fetcher.whenAvailable(itemID: itemID, file: key, range: ByteRange(0, 1), readAhead: 256 << 10,
                                           deadline: .now + readTimeout) { completion((try? $0.get()) != nil) }
        cancellation.attach { ticket.cancel() }
    }

    /// The cache file of an item's side file once every byte of it is there, fetched first
    /// when needed. Blocking (network, bounded by the read bound): for background work only.
    public func wholeSideFile(itemID: Int64, key: CacheFileKey) -> String? {
        var size = fetcher.knownSize(itemID: itemID, file: key)
        if size == nil {
            let learned = DispatchSemaphore(value: 0)
            fetcher.learnSizes(itemID: itemID, files: [key]) { learned.signal() }
            _ = learned.wait(timeout: .now() + .seconds(Int(readTimeout.components.seconds) + 1))
            size = fetcher.knownSize(itemID: itemID, file: key)
        }
        guard let size, size > 0, size <= 32 << 20 else { return nil }
        let range = ByteRange(0, size)
        if !fetcher.isAvailable(itemID: itemID, file: key, range: range) {
            let fetched = DispatchSemaphore(value: 0)
            fetcher.whenAvailable(itemID: itemID, file: key, range: range, readAhead: 0,
                                  deadline: .now + readTimeout) { _ in fetched.signal() }
            _ = fetched.wait(timeout: .now() + .seconds(Int(readTimeout.components.seconds) + 1))
        }
        guard fetcher.isWhole(itemID: itemID, file: key, range: range) else { return nil }
        return fetcher.cacheFilePath(itemID: itemID, file: key)
    }
}
