import Dispatch
import Foundation
import OfflineHTTP
import OfflineStore
import Synchronization

/// Downloads whole items into the cache through the range fetcher (asking for every missing
/// byte), verifies them, and records their state: `downloading` → `cached`, or `idle`
/// (transient: network, timeout) / `failed` (http-error, corrupted, no-space …).
///
/// The seam for the scheduler: it decides when and how many; `download` does one item,
/// blocking the calling thread (never call it from Swift's cooperative pool).
public final class Downloader: Sendable {
    let store: LibraryStore
    let fetcher: RangeFetcher
    /// Chosen renditions of HLS items (`Downloader+HLS`).
    let hls: HLSStreams
    /// Resumes right away after a transient failure this many times within one `download`
    /// (back-off between attempts is the scheduler's).
    public let attemptsPerDownload: Int
    /// Items whose download was asked to stop: sticky until that download returns, so a
    /// cancel that lands before the download has registered its fetch still stops it.
    let stopRequests = Mutex<Set<Int64>>([])

    public init(store: LibraryStore, fetcher: RangeFetcher, hls: HLSStreams, attemptsPerDownload: Int = 3) {
        self.store = store
        self.fetcher = fetcher
        self.hls = hls
        self.attemptsPerDownload = max(1, attemptsPerDownload)
    }

    /// Downloads and verifies the media of `itemID`. Blocking.
    ///
    /// With `recordingFailures` false (the scheduler's way) the item's state is written only
    /// on the way in (`downloading`) and on success (`cached`): a failure is returned for the
    /// caller to decide between a retry (`idle`), `failed`, or what a command asked for
    /// (paused, cancelled), so the event log shows one transition, not two.
    public func download(itemID: Int64, recordingFailures: Bool = true) -> DownloadResult {
        defer { _ = stopRequests.withLock { $0.remove(itemID) } }
        do {
            guard let item = try store.item(id: itemID) else {
                return DownloadResult(itemID: itemID, state: .failed, error: .contentNotFound, message: "no item with id \(itemID)")
            }
            if item.type == .hls { return try downloadHLS(item, recordingFailures: recordingFailures) }
            guard item.mediaURL != nil else {
                return try finish(item, .failed, .contentNotFound, "the item has no media URL (metadata pending)")
            }
            try store.setState(itemID: itemID, state: .downloading)
            var lastError = FetchError(.unavailable, "not attempted")
            attempts: for _ in 0..<attemptsPerDownload {
                switch fetchAll(itemID: itemID) {
                case .success:
                    return try verify(item, recordingFailures: recordingFailures)
                case .failure(let error):
                    lastError = error
                    // What did arrive becomes durable now, so progress survives the pause.
                    _ = try? fetcher.flush(itemID: itemID, file: "media")
                    // A busy origin is asked again after its wait, by the scheduler.
                    if !error.isTransient || error.retryAfter != nil { break attempts }
                }
            }
            let state: ItemState = lastError.isTransient ? .idle : .failed
            var result = try finish(item, state, lastError.itemErrorCode, lastError.message, record: recordingFailures)
            result.retryAfter = lastError.retryAfter
            return result
        } catch {
            return DownloadResult(itemID: itemID, state: .failed, error: .downloadFailed, message: "library database: \(error)")
        }
    }

    /// Verifies an item whose every byte arrived because programs read it (not through
    /// `download`) and makes it `cached` (or `failed`/`corrupted`). A running download
    /// verifies its own item, so one in `downloading` is left to it.
    public func completeStreamed(itemID: Int64) {
        guard let item = try? store.item(id: itemID),
              item.state != .cached, item.state != .downloading, item.state != .deleted, item.type != .hls else { return }
        _ = try? verify(item)
    }

    /// Stops the transfers of a running download; `download` returns `cancelled`.
    public func cancel(itemID: Int64) {
        stopRequests.withLock { _ = $0.insert(itemID) }
        fetcher.cancel(itemID: itemID)
    }

    /// Fetches a side file (thumbnail, subtitle) whole and makes it durable. Blocking.
    public func downloadSideFile(itemID: Int64, file: CacheFileKey) -> Result<Void, FetchError> {
        if case .failure(let error) = fetchAll(itemID: itemID, file: file) { return .failure(error) }
        return Result { () throws(FetchError) in _ = try fetcher.flush(itemID: itemID, file: file) }
    }

    /// Waits until every byte of the file is written (fetching what is missing).
    private func fetchAll(itemID: Int64, file: CacheFileKey = "media") -> Result<Void, FetchError> {
        let done = DispatchSemaphore(value: 0)
        let outcome = OutcomeBox()
        fetcher.whenAvailable(itemID: itemID, file: file, range: ByteRange(0, .max), readAhead: 0,
                              deadline: .now + .seconds(365 * 86_400), forDownload: true) { result in
            outcome.set(result)
            done.signal()
        }
        if stopRequests.withLock({ $0.contains(itemID) }) { fetcher.cancel(itemID: itemID) }
        done.wait()
        return outcome.get()
    }

    /// Size and checksum before the item may be called `cached`; corrupt bytes are discarded.
    private func verify(_ item: Item, recordingFailures: Bool = true) throws -> DownloadResult {
        let record = recordingFailures
        let size: Int64
        switch Result(catching: { () throws(FetchError) -> Int64? in try fetcher.flush(itemID: item.id, file: "media") }) {
        case .success(let committed?):
            size = committed
        case .success(nil):
            return try finish(item, .idle, .networkError, "bytes are missing after the transfer ended", record: record)
        case .failure(let error):
            return try finish(item, error.isTransient ? .idle : .failed, error.itemErrorCode, error.message, record: record)
        }
        if let expected = item.sha256?.lowercased(), !expected.isEmpty {
            let actual: String
            do {
                actual = try fetcher.sha256(itemID: item.id, file: "media", length: size)
            } catch {
                return try corrupted(item, "cannot read the downloaded file back: \(error.message)", record: record)
            }
            guard actual == expected else {
                return try corrupted(item, "sha256 \(actual) of \(size) bytes differs from the catalog's \(expected)", record: record)
            }
        }
        // With the origin's size (the catalog's may be wrong or missing), unless an eviction
        // took the bytes since the flush.
        guard try store.markCached(itemID: item.id, size: size, at: store.clock()) else {
            return DownloadResult(itemID: item.id, state: .idle, error: .networkError, message: "bytes were evicted after the transfer ended")
        }
        return DownloadResult(itemID: item.id, state: .cached, error: nil, message: "\(size) bytes verified")
    }

    private func corrupted(_ item: Item, _ message: String, record: Bool) throws -> DownloadResult {
        try? fetcher.discard(itemID: item.id, file: "media")
        return try finish(item, .failed, .corrupted, message, record: record)
    }

    func finish(_ item: Item, _ state: ItemState, _ error: ItemErrorCode?, _ message: String,
                record: Bool = true) throws -> DownloadResult {
        if record || state == .cached || state == .partiallyCached {
            try store.setState(itemID: item.id, state: state, error: error, detail: error == nil ? nil : message)
        }
        return DownloadResult(itemID: item.id, state: state, error: error, message: message)
    }
}
