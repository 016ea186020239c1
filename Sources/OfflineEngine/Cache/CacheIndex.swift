import Foundation
import OfflineHTTP
import OfflineStore

/// Where an item file is fetched from.
struct FetchOrigin: Sendable, Equatable {
    var url: String
    var destinationPolicy: DestinationPolicy
}

/// An item file as the range fetcher first sees it: where it comes from, and which bytes of
/// which origin version are on disk.
struct StoredCacheFile: Sendable {
    var origin: FetchOrigin
    var validator: CacheValidator?
    var ranges: [Range<Int64>]
}

/// The narrow view of the store the range fetcher needs: where an item's bytes come from,
/// and the durable record of which bytes are on disk and which origin version they are.
/// Every call blocks (SQLite): call from engine threads only.
protocol CacheIndex: AnyObject, Sendable {
    /// The file's origin and durable state, in one read; nil when the item is unknown or has
    /// no such file to fetch.
    func load(itemID: Int64, file: CacheFileKey) throws -> StoredCacheFile?
    /// Claims ranges are on disk (their bytes were flushed first) for their validator, in one
    /// transaction; returns the indices skipped (their item is gone).
    func commit(_ batch: [CacheCommit]) throws -> Set<Int>
    /// Forgets every range; new bytes will belong to `validator`.
    func reset(itemID: Int64, file: CacheFileKey, validator: CacheValidator?) throws
    /// Forgets every range of each file and its validator, in one transaction.
    func reset(_ files: [(itemID: Int64, file: CacheFileKey)]) throws
    /// Another item's side file cached whole from `url`, which `itemID`'s may link.
    func wholeSideFile(url: String, excludingItem itemID: Int64) throws -> WholeSideFile?
    /// Claims all of `copy`'s bytes for `file`, whose cache file now links `copy`'s; false
    /// when the item is gone.
    func adoptWholeSideFile(itemID: Int64, file: CacheFileKey, url: String, copy: WholeSideFile) throws -> Bool
}

/// `CacheIndex` over the library store.
final class StoreCacheIndex: CacheIndex {
    let store: LibraryStore
    /// Where an HLS item's segment, init and key files (`hls.<n>`) come from.
    let hls: HLSStreams?

    init(store: LibraryStore, hls: HLSStreams?) {
        self.store = store
        self.hls = hls
    }

    func load(itemID: Int64, file: CacheFileKey) throws -> StoredCacheFile? {
        // One narrow read: this runs on a reader's first open of the file.
        guard let record = try store.cacheFileRecord(itemID: itemID, file: file),
              let origin = origin(itemID: itemID, file: file, source: record.source) else { return nil }
        return StoredCacheFile(origin: origin, validator: record.validator, ranges: record.ranges)
    }

    private func origin(itemID: Int64, file: CacheFileKey, source: CacheFileSource) -> FetchOrigin? {
        let url: String?
        switch file {
        case "media": url = source.mediaURL
        case "thumbnail": url = source.thumbnailURL
        case let key where key.hasPrefix("subtitle."):
            let language = key.dropFirst("subtitle.".count)
            url = source.subtitles.first { $0.language == language }?.url
        case let key where key.hasPrefix("hls."):
            url = hls?.resourceURL(itemID: itemID, file: key)?.absoluteString
        default: url = nil
        }
        guard let url else { return nil }
        // As open as the source's own feed URL (a LAN server may serve LAN media).
        return FetchOrigin(url: url, destinationPolicy: .forFeed(host: URL(string: source.feedURL)?.host ?? ""))
    }

    func commit(_ batch: [CacheCommit]) throws -> Set<Int> {
        try store.commitPresentRanges(batch)
    }

    func reset(itemID: Int64, file: CacheFileKey, validator: CacheValidator?) throws {
        try store.resetCache(itemID: itemID, file: file, validator: validator)
    }

    func reset(_ files: [(itemID: Int64, file: CacheFileKey)]) throws {
        try store.resetCache(files)
    }

    func wholeSideFile(url: String, excludingItem itemID: Int64) throws -> WholeSideFile? {
        try store.wholeSideFile(url: url, excludingItem: itemID)
    }

    func adoptWholeSideFile(itemID: Int64, file: CacheFileKey, url: String, copy: WholeSideFile) throws -> Bool {
        try store.adoptWholeSideFile(itemID: itemID, file: file, url: url, copy: copy)
    }
}
