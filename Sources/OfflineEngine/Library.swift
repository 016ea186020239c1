public import Foundation
import OfflineHTTP
public import OfflineStore

/// A policy's current value as the CLI and the control file show it.
public struct PolicyValue: Sendable, Equatable {
    public var name: String
    public var value: String
    public var isDefault: Bool
}

/// One library folder: its store and the operations every front end (CLI, mount) shares.
public final class Library: Sendable {
    public let folder: URL
    public let store: LibraryStore
    public let syncSettings: SyncSettings
    let client: HTTPClient

    /// - Parameters:
    ///   - integrityCheck: `.later` for a caller that runs `store.checkIntegrity()` itself
    ///     before it uses the library (the mount: see `LibraryStore.open`).
    ///   - clock: the store's time (tests give it the engine's).
    public init(folder: URL, syncSettings: SyncSettings = SyncSettings(),
                integrityCheck: LibraryStore.IntegrityCheckTiming = .atOpen,
                clock: @escaping @Sendable () -> Date = { Date() }) throws {
        self.folder = folder
        self.store = try LibraryStore.open(folder: folder, integrityCheck: integrityCheck, clock: clock)
        self.syncSettings = syncSettings
        self.client = HTTPClient()
    }

    /// This library as front ends read it: named queries, never the store itself.
    public var view: LibraryView { LibraryView(store: store) }

    // MARK: - Sources

    /// Registers a feed under `name` (the folder name in `sources/`); nothing is fetched yet.
    @discardableResult
    public func addSource(name: String, feedURL: String) throws -> Source {
        guard let url = URL(string: feedURL), let scheme = url.scheme?.lowercased(),
              scheme == "http" || scheme == "https", url.host?.isEmpty == false else {
            throw EngineError.invalidArgument("feed URL must be an http:// or https:// URL, got '\(feedURL)'")
        }
        return try store.addSource(name: name, feedURL: feedURL)
    }

    /// Forgets a source, its items and their cached files (with no engine running; a
    /// running one does it with `Engine.removeSource`).
    public func removeSource(name: String) throws {
        CacheLayout.removeFolders(library: folder, itemIDs: try store.removeSource(name: name))
    }

    /// Removes cache folders whose item is gone: what a process that ended between removing
    /// items and their files left behind. Not those `inUse` names: an item removed while a
    /// reader has it open keeps its files to the last close, and this may run meanwhile.
    func removeOrphanCacheFolders(inUse: (Int64) -> Bool) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: CacheLayout.cacheFolder(library: folder).path)) ?? []
        let ids = names.compactMap { Int64($0) }
        guard !ids.isEmpty, let existing = try? store.existingItemIDs(among: ids) else { return }
        CacheLayout.removeFolders(library: folder, itemIDs: ids.filter { !existing.contains($0) && !inUse($0) })
    }

    public func sources() throws -> [Source] {
        try store.sources()
    }

    /// Syncs one source by name, or every subscribed source, with no engine running (a
    /// running one syncs through `Scheduler.requestSync`). Blocking.
    public func sync(sourceName: String? = nil) throws -> [SyncReport] {
        let syncer = CatalogSync(store: store, client: client, settings: syncSettings)
        if let sourceName {
            guard let source = try store.source(named: sourceName) else {
                throw EngineError.notFound("no source named '\(sourceName)'")
            }
            return [removingDroppedItemsFiles(syncer.sync(source))]
        }
        return try store.sources().filter(\.subscribed).map { removingDroppedItemsFiles(syncer.sync($0)) }
    }

    /// The thumbnails and subtitles of items the feed dropped (never downloaded) go with them.
    private func removingDroppedItemsFiles(_ report: SyncReport) -> SyncReport {
        CacheLayout.removeFolders(library: folder, itemIDs: report.merged?.removedItemIDs ?? [])
        return report
    }

    // MARK: - Items

    public func items(_ filter: ItemFilter = .all) throws -> [ItemSummary] {
        let hls = HLSStreams(store: store)  // reads chosen renditions only; never fetches
        let licences = try store.licences()
        return try store.items(matching: filter).map {
            var summary = ItemSummary($0, licence: licences[$0.item.id])
            hls.describe(&summary)
            return summary
        }
    }

    /// The items of `filter` in the order of `items(_:)`, read `batchSize` at a time: a
    /// listing that prints as it reads holds one batch and the ids (8 bytes an item), not
    /// every item's summary. An item deleted meanwhile is left out.
    public func forEachItem(_ filter: ItemFilter = .all, batchSize: Int = 1_000,
                            _ body: (ItemSummary) throws -> Void) throws {
        let hls = HLSStreams(store: store)  // reads chosen renditions only; never fetches
        let ids = try store.itemIDs(matching: filter)
        var start = 0
        while start < ids.count {
            let end = min(ids.count, start + batchSize)
            for (listing, licence) in try store.items(ids: Array(ids[start..<end])) {
                var summary = ItemSummary(listing, licence: licence)
                hls.describe(&summary)
                try body(summary)
            }
            start = end
        }
    }

    // MARK: - Policies

    /// Sets a policy from the user's words (`20G`, `01:00-06:00`, `default`); returns the
    /// canonical value stored.
    @discardableResult
    public func setPolicy(_ name: String, _ value: String) throws -> String {
        try store.setPolicy(name: name, value: value)
    }

    /// Every policy with its value, in a stable order.
    public func policies() throws -> [PolicyValue] {
        try store.allPolicies().map { PolicyValue(name: $0.name, value: $0.value, isDefault: $0.isDefault) }
    }
}
