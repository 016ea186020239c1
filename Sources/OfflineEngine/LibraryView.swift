public import Foundation
public import OfflineStore

/// Where a library's contents stood when read: equal versions, same rows. Opaque, so a front
/// end only compares them (`LibraryView.version()`).
public struct LibraryVersion: Sendable, Equatable {
    let token: StoreChangeToken
}

/// What a front end shows of a library, read from its store: the rows a file tree is built
/// from, an item's details, the event log, and the few policies that change what a reader
/// gets. Named queries, so the mount asks the engine and never the store; the one write is
/// the refusal of a request, which goes to the event log where its writer looks for it.
/// Every call is a local store read (bounded, never the network).
public struct LibraryView: Sendable {
    let store: LibraryStore

    public init(store: LibraryStore) {
        self.store = store
    }

    /// The library folder.
    public var folder: URL { store.folder }

    /// Moves whenever a row a view shows changes (read it before the rows it covers).
    public func version() throws -> LibraryVersion {
        LibraryVersion(token: try store.changeToken())
    }

    /// When a listing of the library last changed (nil: never).
    public func lastChange() throws -> Date? { try store.lastListingChange() }

    // MARK: - What a tree lists

    public func sources() throws -> [Source] { try store.sources() }

    public func categories() throws -> [Category] { try store.categories() }

    /// Every listed item's outline, in listing order.
    public func itemOutlines() throws -> [ItemOutline] { try store.itemOutlines() }

    /// The same outlines handed over one at a time, none kept.
    public func forEachItemOutline(_ body: (ItemOutline) throws -> Void) throws {
        try store.forEachItemOutline(body)
    }

    /// One listed item's outline, as `itemOutlines()` has it (a point look-up): what a
    /// mount answers from before its first tree is built.
    public func itemOutline(id: Int64) throws -> ItemOutline? { try store.itemOutline(id: id) }

    /// The same by file name (unique library-wide).
    public func itemOutline(fileName: String) throws -> ItemOutline? { try store.itemOutline(fileName: fileName) }

    /// Items cached at or after this many days ago are recent (policy `recent-days`).
    public func recentDays() throws -> Int { try store.policy(.recentDays) }

    /// The ids of HLS items whose every segment is cached.
    public func cachedHLSItemIDs() throws -> [Int64] { try store.cachedHLSItemIDs() }

    /// When each item's licence expires, for the items whose licence does.
    public func licenceExpiries() throws -> [Int64: Date] { try store.licenceExpiries() }

    /// With policy `sidecars nfo`, the size of each item's `.nfo` (`ItemSidecar`) and of each
    /// source's artwork (`SourceArtwork`), by id; empty otherwise. Listings show them, so
    /// copies and media servers read them whole. Reads every item's row: only then.
    public func sidecarSizes(sources: [Source]) throws -> (nfo: [Int64: UInt64], artwork: [Int64: UInt64]) {
        guard try store.policies().nfoSidecars else { return ([:], [:]) }
        var artworks: [Int64: UInt64] = [:]
        for source in sources where source.imageURL != nil {
            var info = stat()
            if stat(SourceArtwork.path(library: store.folder, sourceID: source.id), &info) == 0, info.st_size > 0 {
                artworks[source.id] = UInt64(info.st_size)
            }
        }
        let byID = Dictionary(uniqueKeysWithValues: sources.map { ($0.id, $0) })
        var sizes: [Int64: UInt64] = [:]
        try store.forEachItemDetails { item in
            guard let source = byID[item.sourceID] else { return }
            sizes[item.id] = UInt64(ItemSidecar.nfo(item, source: source).utf8.count)
        }
        return (sizes, artworks)
    }

    // MARK: - One item or source

    public func item(id: Int64) throws -> Item? { try store.item(id: id) }

    public func source(id: Int64) throws -> Source? { try store.source(id: id) }

    /// Name paths of the item's categories, sorted.
    public func categoryPaths(itemID: Int64) throws -> [[String]] { try store.categoryPaths(itemID: itemID) }

    public func licence(itemID: Int64) throws -> Licence? { try store.licence(itemID: itemID) }

    /// The item's `.nfo` as made from the catalog now (`ItemSidecar`); nil when the item or
    /// its source is gone.
    public func nfo(itemID: Int64) throws -> String? {
        guard let item = try store.item(id: itemID), let source = try store.source(id: item.sourceID) else { return nil }
        return ItemSidecar.nfo(item, source: source)
    }

    /// The content key of an encrypted HLS item: the licence server's, or the playlist's kept
    /// with the licence.
    public func hlsKey(itemID: Int64) throws -> Data? { try store.licence(itemID: itemID)?.key }

    /// Whether every read of the item's media must reach the engine: a rental's play clock
    /// waits for its first playback, which only a player's reads start (`LicenceClock`).
    /// When the licence cannot be read, they must (the clock must not be missed).
    public func playClockWaitsForReads(itemID: Int64) -> Bool {
        guard let licence = try? store.licence(itemID: itemID) else { return true }
        return LicenceClock.waitsForFirstPlayback(licence)
    }

    /// Items not `discovered`, as `.status` lists them, with their HLS progress from `hls`.
    public func statusSummaries(hls: HLSStreams?) throws -> [ItemSummary] {
        let licences = try store.licences()
        return try store.items(matching: .notDiscovered).map {
            var summary = ItemSummary($0, licence: licences[$0.item.id])
            hls?.describe(&summary)
            return summary
        }
    }

    // MARK: - Policies a reader feels

    /// Policy `thumbnail-cache` (on when it cannot be read, its default).
    public func thumbnailCacheEnabled() -> Bool { (try? store.policies())?.thumbnailCache ?? true }

    /// Policy `scanner-reads` (`header`, its default, when it cannot be read).
    public func scannerReads() -> ScannerReads { (try? store.policies())?.scannerReads ?? .header }

    // MARK: - The event log

    /// Events after sequence number `seq`, oldest first, at most `limit`.
    public func events(after seq: Int64, limit: Int) throws -> [StoreEvent] {
        try store.events(after: seq, limit: limit)
    }

    /// Sets the item's size to its origin's, if another (an HLS item's is an estimate: kept).
    func correctSize(itemID: Int64, originSize: Int64) {
        guard let item = try? store.item(id: itemID), item.type != .hls, item.size != originSize else { return }
        try? store.setSize(itemID: itemID, originSize)
    }

    /// Records why reads of an item failed that the reader cannot tell (`EIO` says nothing),
    /// as an `error` event.
    func recordReadFailure(itemID: Int64, message: String) {
        _ = try? store.appendEvent(kind: .error, itemID: itemID, message: message)
    }

    /// Records a request the library refused (a bad control line, a bad toggle value) as an
    /// `error` event: its writer reads why from the event log.
    /// With `item`, a reference as the request named it: the event carries the item, if known.
    public func recordRefusal(message: String, details: String?, item reference: String? = nil) throws {
        let itemID = reference.flatMap { try? ItemReference.resolve($0, in: store).id }
        try store.appendEvent(kind: .error, itemID: itemID, message: message, details: details)
    }
}
