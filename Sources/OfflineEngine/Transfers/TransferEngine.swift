import Foundation
import OfflineHTTP
import OfflineStore

/// The transfer machinery of one library, wired together: the curl loop thread, the range
/// fetcher (the `ItemByteSource` front ends read through) and the whole-item downloader.
public final class TransferEngine: Sendable {
    public let loop: TransferLoop
    public let fetcher: RangeFetcher
    public let downloader: Downloader

    let store: LibraryStore

    public init(store: LibraryStore, settings: FetchSettings = FetchSettings(),
                loopConfiguration: TransferLoop.Configuration = TransferLoop.Configuration(),
                attemptsPerDownload: Int = 3) throws {
        self.store = store
        loop = try TransferLoop(configuration: loopConfiguration)
        fetcher = RangeFetcher(store: store, loop: loop, settings: settings)
        downloader = Downloader(store: store, fetcher: fetcher, attemptsPerDownload: attemptsPerDownload)
        let downloader = downloader
        fetcher.onFileCompleted { itemID, file in
            guard file == "media" else { return }
            downloader.completeStreamed(itemID: itemID)  // on the flusher's thread: blocking is fine
        }
    }

    /// Drops an item's cached media (thumbnail and subtitles kept): its transfers stop, the
    /// store forgets the ranges before the bytes go, and the item is listed as remote again.
    public func evict(itemID: Int64) throws {
        fetcher.cancel(itemID: itemID)
        try fetcher.discard(itemID: itemID, file: "media")
        try store.setDownloaded(itemID: itemID, at: nil)
        if let item = try store.item(id: itemID), item.state != .discovered, item.state != .deleted {
            try store.setState(itemID: itemID, state: .discovered)
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
}
