import Dispatch
import Foundation
public import OfflineFeeds
public import OfflineHTTP
public import OfflineStore
import Synchronization

/// The HLS items' chosen renditions, in memory: loaded from the store on first use, resolved
/// from the origin when none was chosen yet (a download, or a program opening the playlist in
/// the mount), forgotten on evict, cancel and delete.
///
/// Lock order: `resolving` (held across network) → `streams` (a leaf).
public final class HLSStreams: Sendable {
    let store: LibraryStore
    private let resolver: HLSResolver
    /// The items that have a chosen rendition, read from the store once, and the renditions
    /// read so far. This registry is the only writer of the store's records while an engine
    /// runs, so it is never stale; an item not among them has none without a store read (a
    /// listing of many HLS items nobody opened, every item an eviction asks about), and what
    /// is kept grows with the HLS items that have a rendition, not with the items asked about.
    private let streams = Mutex(Known())
    private struct Known {
        /// Nil until first read (or when that read failed: every look-up asks the store).
        var withStream: Set<Int64>?
        var loaded: [Int64: HLSStream] = [:]
    }
    /// One resolution at a time: two readers opening the same new playlist fetch it once.
    private let resolving = Mutex<Void>(())
    let background = DispatchQueue(label: "offlinefs.hls-resolve", attributes: .concurrent)

    public init(store: LibraryStore, client: HTTPClient = HTTPClient(), limits: HLSLimits = HLSLimits(),
                timeouts: HTTPTimeouts = .document) {
        self.store = store
        resolver = HLSResolver(client: client, limits: limits, timeouts: timeouts)
    }

    /// The item's chosen rendition if there is one (memory, else the store). No network.
    public func stream(itemID: Int64) -> HLSStream? {
        let known = streams.withLock { known -> (stream: HLSStream?, hasNone: Bool) in
            // One read of a few ids, under this leaf lock, so no choice lands between it and its use.
            if known.withStream == nil { known.withStream = try? store.hlsStreamItemIDs() }
            return (known.loaded[itemID], known.withStream.map { !$0.contains(itemID) } ?? false)
        }
        if let stream = known.stream { return stream }
        if known.hasNone { return nil }
        let stream = (try? store.hlsStream(itemID: itemID)).flatMap { $0 }.flatMap { try? HLSStream(record: $0) }
        streams.withLock { known in
            if let stream { known.loaded[itemID] = stream } else { known.withStream?.remove(itemID) }
        }
        return stream
    }

    /// The rendition to download for `quality` and `audio` (the stored forms): the chosen one
    /// when it was chosen for the same, else a new choice (the old one's cache files are the
    /// caller's to drop). Blocking (network).
    public func resolve(itemID: Int64, quality: String?, audio: String?, maxBytes: Int64?) throws(HLSFailure) -> HLSStream {
        try resolving.withLock { _ throws(HLSFailure) -> HLSStream in
            if let current = stream(itemID: itemID), current.record.isChoice(quality: quality, audio: audio) { return current }
            let item: Item
            do {
                guard let found = try store.item(id: itemID) else { throw HLSFailure(.contentNotFound, "no item with id \(itemID)") }
                item = found
            } catch let failure as HLSFailure {
                throw failure
            } catch {
                throw HLSFailure(.downloadFailed, "library database: \(error)")
            }
            let record = try resolver.resolve(item: item, quality: quality, audio: audio, maxBytes: maxBytes,
                                              destinationPolicy: destinationPolicy(item), now: store.clock())
            let stream = try HLSStream(record: record)
            do { try store.putHLSStream(record) } catch {
                throw HLSFailure(.downloadFailed, "library database: \(error)")
            }
            streams.withLock { known in
                known.loaded[itemID] = stream
                known.withStream?.insert(itemID)
            }
            if item.state != .cached, let estimate = record.estimatedSize, item.size != estimate {
                // The estimate is the size `status`, xattrs and the policies see until every
                // segment is here and the exact count replaces it.
                try? store.setSize(itemID: itemID, estimate)
            }
            return stream
        }
    }

    /// The chosen rendition, resolved in the background when there is none yet (a program
    /// opened the playlist of an item nobody downloaded). `completion` runs on another thread.
    public func withStream(itemID: Int64, completion: @escaping @Sendable (Result<HLSStream, HLSFailure>) -> Void) {
        if let stream = stream(itemID: itemID) {
            completion(.success(stream))
            return
        }
        background.async { [self] in
            let item = try? store.item(id: itemID)
            completion(Result { () throws(HLSFailure) in
                try resolve(itemID: itemID, quality: item?.quality, audio: item?.audioLanguages, maxBytes: nil)
            })
        }
    }

    /// The variants of an HLS item's master playlist: those stored with its chosen rendition,
    /// else fetched now and not stored (a command run beside a mount must not write the
    /// mount's records). Blocking (network) only when none is stored.
    public func variants(itemID: Int64) throws(HLSFailure) -> [HLSVariantRecord] {
        if let record = stream(itemID: itemID)?.record, !record.variants.isEmpty || record.bandwidth == nil {
            return record.variants
        }
        guard let item = try? store.item(id: itemID) else { throw HLSFailure(.contentNotFound, "no item with id \(itemID)") }
        return try resolver.variants(item: item, destinationPolicy: destinationPolicy(item))
    }

    /// Segments on disk and in the rendition, when one is chosen (`status`, xattrs).
    public func segmentProgress(itemID: Int64) -> (present: Int, total: Int)? {
        guard let stream = stream(itemID: itemID), let states = try? store.cacheStates(itemID: itemID) else { return nil }
        return (stream.segmentsPresent(in: states), stream.segmentCount)
    }

    /// Forgets the item's chosen rendition (store and memory).
    public func forget(itemID: Int64) {
        // The store first: a look-up in between then finds no record to load.
        try? store.removeHLSStream(itemID: itemID)
        streams.withLock { known in
            known.loaded[itemID] = nil
            known.withStream?.remove(itemID)
        }
    }

    /// How many items the registry holds anything for (tests).
    var itemsKept: Int {
        streams.withLock { Set($0.loaded.keys).union($0.withStream ?? []).count }
    }

    /// Origin URL of an HLS cache file (`hls.<n>`), for the range fetcher.
    func resourceURL(itemID: Int64, file: CacheFileKey) -> URL? {
        stream(itemID: itemID)?.resourceURLs[file]
    }

    /// Segment, init and key URLs may reach what the source's feed may reach.
    func destinationPolicy(_ item: Item) -> DestinationPolicy {
        let feedHost = (try? store.source(id: item.sourceID)).flatMap { $0.flatMap { URL(string: $0.feedURL)?.host } } ?? ""
        return .forFeed(host: feedHost)
    }
}

extension HLSStreams {
    /// Adds what an HLS item's chosen rendition tells to its summary: segments present, the
    /// variant, and whether the size is still an estimate. Store reads only, no network.
    public func describe(_ summary: inout ItemSummary) {
        guard summary.type == ItemType.hls.rawValue, let stream = stream(itemID: summary.id) else { return }
        if let progress = segmentProgress(itemID: summary.id) { summary.segments = "\(progress.present)/\(progress.total)" }
        let variant = stream.variantDescription
        summary.variant = variant.isEmpty ? nil : variant
        summary.sizeIsEstimate = summary.state != ItemState.cached.rawValue
    }
}
