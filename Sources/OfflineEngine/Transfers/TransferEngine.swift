import Foundation
import OfflineHTTP
import OfflineStore

/// The transfer machinery of one library, wired together: the curl loop thread, the range
/// fetcher (the `ItemByteSource` front ends read through) and the whole-item downloader.
public final class TransferEngine: Sendable {
    public let loop: TransferLoop
    public let fetcher: RangeFetcher
    public let downloader: Downloader

    public init(store: LibraryStore, settings: FetchSettings = FetchSettings(),
                loopConfiguration: TransferLoop.Configuration = TransferLoop.Configuration()) throws {
        loop = try TransferLoop(configuration: loopConfiguration)
        fetcher = RangeFetcher(store: store, loop: loop, settings: settings)
        downloader = Downloader(store: store, fetcher: fetcher)
    }

    /// Stops transfers, flushes written bytes, ends the threads.
    public func shutdown() {
        fetcher.shutdown()
        loop.shutdown()
    }
}
