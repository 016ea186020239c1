import Foundation
import OfflineHTTP
import OfflineStore

/// The transfer machinery of one library, wired together: the curl loop thread, the range
/// fetcher (what `LibraryReader` reads through) and the whole-item downloader.
public final class TransferEngine: Sendable {
    public let loop: TransferLoop
    public let fetcher: RangeFetcher
    public let downloader: Downloader
    /// Chosen renditions of HLS items: their playlists, segment files and URLs.
    public let hls: HLSStreams

    let store: LibraryStore

    public init(store: LibraryStore, settings: FetchSettings = FetchSettings(), attemptsPerDownload: Int = 3) throws {
        self.store = store
        loop = TransferLoop()
        hls = HLSStreams(store: store, timeouts: HTTPTimeouts(connect: settings.timeouts.connect,
                                                               lowSpeedBytesPerSecond: settings.timeouts.lowSpeedBytesPerSecond,
                                                               lowSpeedSeconds: settings.timeouts.lowSpeedSeconds,
                                                               total: HTTPTimeouts.document.total))
        fetcher = RangeFetcher(store: store, loop: loop, settings: settings, hls: hls)
        downloader = Downloader(store: store, fetcher: fetcher, hls: hls, attemptsPerDownload: attemptsPerDownload)
        let downloader = downloader
        let fetcher = fetcher
        fetcher.onFileCompleted { itemID, file in
            // On the flusher's thread: blocking is fine.
            if file == "media" { return downloader.completeStreamed(itemID: itemID) }
            if CacheLayout.isSideFile(file), let size = fetcher.knownSize(itemID: itemID, file: file) {
                // A stated size found wrong is corrected where listings read it.
                _ = try? store.correctSideFileSize(itemID: itemID, file: file, size)
            }
        }
    }

    /// Drops an item's cached media (with `sideFiles`, its thumbnail and subtitles too): its
    /// transfers stop, the store forgets the ranges before the bytes go, and the item is
    /// listed as remote again.
    public func evict(itemID: Int64, sideFiles: Bool = false) throws {
        try evict(itemIDs: [itemID], sideFiles: sideFiles)
    }

    /// `evict(itemID:)` for many items, their bytes forgotten in one store transaction.
    public func evict(itemIDs: [Int64], sideFiles: Bool = false) throws {
        var files: [(itemID: Int64, file: CacheFileKey)] = []
        for itemID in itemIDs {
            fetcher.cancel(itemID: itemID)
            // An evicted HLS item keeps its playlists: its `.m3u8` stays listed with its size and
            // plays at once (mpv takes a 0-byte playlist for a file being written, and waits).
            files += mediaFiles(itemID: itemID).map { (itemID, $0) }
            if sideFiles, let item = try store.item(id: itemID) {
                files += Self.sideFiles(of: item).map { (itemID, $0) }
            }
        }
        try fetcher.discard(files)
        // Only what changes is written: each write is a synced transaction, and evicting what
        // programs streamed (never downloaded, still `discovered`) then costs none more.
        for itemID in itemIDs {
            guard let item = try store.item(id: itemID) else { continue }
            if item.downloadedAt != nil { try store.setDownloaded(itemID: itemID, at: nil) }
            if item.state != .discovered, item.state != .deleted { try store.setState(itemID: itemID, state: .discovered) }
        }
    }

    /// Starts the transfer and flusher threads, which otherwise start with the first transfer
    /// and the first flush, i.e. while the first reader of a mount waits. Only once forking is
    /// over (a daemonizing mount forks after creating the engine).
    public func startThreads() {
        loop.startThread()
        fetcher.startThreads()
    }

    /// Stops transfers, flushes written bytes, ends the threads.
    public func shutdown() {
        fetcher.shutdown()
        loop.shutdown()
    }

    /// The cache files that hold an item's media: `media`, or an HLS item's segment, init and
    /// key files (thumbnail and subtitles are side files).
    public func mediaFiles(itemID: Int64) -> [CacheFileKey] {
        Self.mediaFiles(itemID: itemID, store: store, hls: hls)
    }

    /// The same without an engine (commands applied straight to the store): an HLS item's
    /// files are named by its stored rendition even where no byte is claimed yet.
    public static func mediaFiles(itemID: Int64, store: LibraryStore, hls: HLSStreams) -> [CacheFileKey] {
        let hlsFiles = hls.stream(itemID: itemID).map { Array($0.resourceURLs.keys) } ?? []
        let claimed = (try? store.mediaFileKeys(itemID: itemID)) ?? []
        return Array(Set(["media"] + hlsFiles + claimed)).sorted()
    }

    /// Forgets an item's media bytes (store first, then disk) and an HLS item's chosen
    /// rendition, so the next download chooses again with fresh URLs.
    public func discardMedia(itemID: Int64) throws {
        for file in mediaFiles(itemID: itemID) { try fetcher.discard(itemID: itemID, file: file) }
        hls.forget(itemID: itemID)
    }

    /// The cache files of an item's thumbnail and subtitles.
    static func sideFiles(of item: Item) -> [CacheFileKey] {
        (item.thumbnailURL == nil ? [] : ["thumbnail"]) + item.subtitles.map { "subtitle.\($0.language)" }
    }

    /// After a full disk: gives back unclaimed space of every media file (`RangeFetcher`).
    public func recoverFromWriteFailure(itemID: Int64) {
        for file in mediaFiles(itemID: itemID) { fetcher.recoverFromWriteFailure(itemID: itemID, file: file) }
    }
}
