public import Foundation
import OfflineFeeds
public import OfflineHTTP
public import OfflineStore

/// Syncs one source: fetches its feed (conditionally), parses it, follows `next` pages,
/// sizes items the feed does not, and merges the result into the store in one transaction;
/// then fetches the playlists of new HLS items (`HLSStreams.prepare`).
///
/// Blocking: run it on a thread of its own, never on Swift's cooperative pool.
/// A bad feed never throws out of here: it becomes the source's sync error.
public struct CatalogSync: Sendable {
    let store: LibraryStore
    let client: HTTPClient
    let settings: SyncSettings
    let now: @Sendable () -> Date
    /// Where the HLS items' renditions are chosen and kept (the running engine's, so the
    /// mount sees what a sync prepared).
    let hls: HLSStreams

    public init(store: LibraryStore, client: HTTPClient = HTTPClient(), settings: SyncSettings = SyncSettings(),
                hls: HLSStreams? = nil, now: @escaping @Sendable () -> Date = { Date() }) {
        self.store = store
        self.client = client
        self.settings = settings
        self.hls = hls ?? HLSStreams(store: store, client: client)
        self.now = now
    }

    public func sync(_ source: Source) -> SyncReport {
        var report = SyncReport(sourceName: source.name, outcome: .notModified, warnings: [], pagesFetched: 0, sizesProbed: 0)
        do {
            report.outcome = try syncOrThrow(source, report: &report)
            // Also after a `304`: items a failed or older sync left unprepared get their turn.
            report.warnings += hls.prepare(sourceID: source.id)
        } catch {
            report.outcome = .failed(error.message)
            try? store.recordSync(sourceID: source.id, etag: nil, lastModified: nil, error: error.message, at: now())
        }
        return report
    }

    private func syncOrThrow(_ source: Source, report: inout SyncReport) throws(SyncFailure) -> SyncReport.Outcome {
        guard let feedURL = URL(string: source.feedURL), let host = feedURL.host else {
            throw SyncFailure("invalid feed URL \(source.feedURL)")
        }
        let fetcher = FeedFetcher(client: client, settings: settings,
                                  destinationPolicy: .forFeed(host: host))
        // Validators only count when the last sync succeeded; otherwise fetch everything.
        let trusted = source.lastSyncError == nil && source.lastSyncAt != nil
        let first = try fetcher.fetchFirstPage(
            url: source.feedURL,
            etag: trusted ? source.etag : nil,
            lastModified: trusted ? source.lastModified : nil)
        report.pagesFetched = 1
        guard case .document(var firstDocument) = first else {
            try record { try store.recordSync(sourceID: source.id, etag: source.etag, lastModified: source.lastModified, error: nil, at: now()) }
            return .notModified
        }

        var feed = try parse(firstDocument, kindHint: source.kind.flatMap { OfflineFeeds.FeedKind(rawValue: $0.rawValue) })
        firstDocument.body = Data()  // peak memory: the document is not needed once parsed
        var items = feed.items
        feed.items = []
        report.warnings = feed.warnings
        try followPages(from: feed, fetcher: fetcher, items: &items, report: &report)

        let entries = try entriesWithSizes(consuming: &items, source: source, policy: fetcher.destinationPolicy,
                                           report: &report)
        let merge = try record {
            try store.mergeCatalog(sourceID: source.id, title: feed.title, entries: entries, isComplete: true, now: now())
        }
        try record {
            if let kind = OfflineStore.FeedKind(rawValue: feed.kind.rawValue), kind != source.kind {
                try store.setSourceKind(sourceID: source.id, kind)
            }
            try store.setLookupTemplate(sourceID: source.id, feed.lookupTemplate)
            try store.recordSync(sourceID: source.id, etag: firstDocument.etag,
                                 lastModified: firstDocument.lastModified, error: nil, at: now())
        }
        if let warning = SourceArtwork.refresh(source, url: feed.imageURL, store: store, client: client,
                                               policy: fetcher.destinationPolicy) {
            report.warnings.append(warning)
        }
        return .merged(merge)
    }

    private func parse(_ document: FeedFetcher.Document, kindHint: OfflineFeeds.FeedKind?) throws(SyncFailure) -> ParsedFeed {
        do {
            return try FeedParser.parse(document.body, kind: kindHint, baseURL: document.effectiveURL,
                                        limits: settings.feedLimits)
        } catch {
            throw SyncFailure("\(document.effectiveURL.absoluteString): \(error.message)")
        }
    }

    /// Appends the items of every `next` page, stopping at loops and at the page and item caps.
    private func followPages(from feed: ParsedFeed, fetcher: FeedFetcher, items: inout [FeedItem],
                             report: inout SyncReport) throws(SyncFailure) {
        var seenPages: Set<String> = []
        var seenIDs = Set(items.map(\.contentID))
        var next = feed.nextPageURL
        while let url = next {
            guard seenPages.insert(url).inserted else {
                report.warnings.append("catalog paging loops back to \(url); stopped there")
                return
            }
            guard report.pagesFetched < settings.maxPages else {
                throw SyncFailure("catalog has more than \(settings.maxPages) pages")
            }
            let document = try fetcher.fetchPage(url: url)
            report.pagesFetched += 1
            let page = try parse(document, kindHint: feed.kind)
            report.warnings += page.warnings
            for item in page.items where seenIDs.insert(item.contentID).inserted {
                items.append(item)
            }
            guard items.count <= settings.feedLimits.maxItems else {
                throw SyncFailure("catalog lists more than \(settings.feedLimits.maxItems) items")
            }
            next = page.nextPageURL
        }
    }

    /// Catalog entries with sizes, of the media and of the side files (thumbnail, subtitles):
    /// the feed's, else the one a previous sync found, else a HEAD request's.
    private func entriesWithSizes(consuming items: inout [FeedItem], source: Source, policy: DestinationPolicy,
                                  report: inout SyncReport) throws(SyncFailure) -> [CatalogEntry] {
        var entries = items.map(CatalogEntry.init)
        items = []
        let unsized = entries.indices.filter { entries[$0].size == nil }
        let sideFilesUnsized = entries.contains { entry in
            (entry.thumbnailURL != nil && entry.thumbnailSize == nil) || entry.subtitles.contains { $0.size == nil }
        }
        guard !unsized.isEmpty || sideFilesUnsized else { return entries }
        let known = try record {
            try store.items(matching: ItemFilter(source: source.name, includeDeleted: true))
        }
        var knownSizes: [String: Int64] = [:]
        var knownSideFileSizes: [String: Int64] = [:]  // by URL
        for listing in known {
            let item = listing.item
            if let size = item.size { knownSizes[item.contentID] = size }
            if let url = item.thumbnailURL, let size = item.thumbnailSize { knownSideFileSizes[url] = size }
            for track in item.subtitles { if let size = track.size { knownSideFileSizes[track.url] = size } }
        }
        var toProbe: [Int] = []
        for index in unsized {
            if let size = knownSizes[entries[index].contentID] {
                entries[index].size = size
            } else if entries[index].type != .hls {
                toProbe.append(index)  // a playlist's size is not its media's
            }
        }
        // Side files: one HEAD per URL, however many items share it (a podcast's artwork).
        var sideFileURLs: [String] = []
        var queued = Set<String>()
        for entry in entries {
            let urls = [entry.thumbnailSize == nil ? entry.thumbnailURL : nil] + entry.subtitles.map { $0.size == nil ? $0.url : nil }
            for case let url? in urls where knownSideFileSizes[url] == nil && queued.insert(url).inserted {
                sideFileURLs.append(url)
            }
        }
        let probe = SizeProbe(client: client, settings: settings, destinationPolicy: policy)
        for (index, size) in zip(toProbe, probe.sizes(of: toProbe.map { entries[$0].mediaURL })) { entries[index].size = size }
        for (url, size) in zip(sideFileURLs, probe.sideFileSizes(of: sideFileURLs)) { knownSideFileSizes[url] = size }
        for index in entries.indices {
            if let url = entries[index].thumbnailURL, entries[index].thumbnailSize == nil {
                entries[index].thumbnailSize = knownSideFileSizes[url]
            }
            for track in entries[index].subtitles.indices where entries[index].subtitles[track].size == nil {
                entries[index].subtitles[track].size = knownSideFileSizes[entries[index].subtitles[track].url]
            }
        }
        report.sizesProbed = toProbe.count + sideFileURLs.count
        return entries
    }

    /// Store errors end the sync with the store's message.
    private func record<T>(_ body: () throws -> T) throws(SyncFailure) -> T {
        do { return try body() } catch { throw SyncFailure("library database: \(error)") }
    }
}
