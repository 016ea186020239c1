import CSystemShim
public import Foundation
import OfflineFeeds
public import OfflineHTTP
public import OfflineStore

/// Syncs one source: fetches its feed (conditionally), parses it, follows `next` pages,
/// sizes items the feed does not, and merges each page into the store as it arrives, in a
/// transaction of its own (memory is bounded by a page, not the catalog); the items the
/// catalog no longer lists leave once the last page merged. Then fetches the playlists of
/// new HLS items (`HLSStreams.prepare`).
///
/// A failed page or a crash keeps the pages merged before it (see `PagedCatalogMerge`).
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
        var merge: PagedCatalogMerge?
        do {
            report.outcome = try store.withMergeCache { () throws(SyncFailure) in try syncOrThrow(source, report: &report, merge: &merge) }
            // Also after a `304`: items a failed or older sync left unprepared get their turn.
            report.warnings += hls.prepare(sourceID: source.id)
        } catch {
            report.outcome = .failed(error.message)
            if let merge, merge.report != MergeReport() { report.partialMerge = merge.report }
            try? store.recordSync(sourceID: source.id, etag: nil, lastModified: nil, error: error.message, at: now())
        }
        // The feed's pages, their items and the merge's page cache are freed now; malloc would
        // keep the pages for a mount's weeks (it gives back only the top of a heap by itself).
        csystem_release_free_memory()
        return report
    }

    private func syncOrThrow(_ source: Source, report: inout SyncReport,
                             merge: inout PagedCatalogMerge?) throws(SyncFailure) -> SyncReport.Outcome {
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
        report.warnings = feed.warnings
        merge = store.beginCatalogMerge(sourceID: source.id, now: now())
        var sizer = CatalogSizer(store: store, source: source,
                                 probe: SizeProbe(client: client, settings: settings,
                                                  destinationPolicy: fetcher.destinationPolicy))
        let paging = Paging(pagesFetched: report.pagesFetched)
        var items = feed.items.filter { paging.seenIDs.insert($0.contentID).inserted }
        feed.items = []
        // The next pages are fetched and parsed on a thread of their own while this one merges.
        let handoff = PageHandoff<[FeedItem]>()
        let pagesDone = DispatchSemaphore(value: 0)
        let pagingFeed = feed
        let pager = Thread { [self] in
            csystem_name_this_thread("ofs-sync-pages")
            defer { pagesDone.signal() }
            do throws(SyncFailure) {
                try followPages(from: pagingFeed, fetcher: fetcher, seenIDs: &paging.seenIDs,
                                pagesFetched: &paging.pagesFetched, warnings: &paging.warnings) { (page) throws(SyncFailure) in
                    guard handoff.put(page) else { throw SyncFailure("sync stopped") }
                }
                handoff.finish(nil)
            } catch {
                handoff.finish(error)
            }
        }
        pager.start()
        defer {
            handoff.cancel()
            pagesDone.wait()
            report.pagesFetched = paging.pagesFetched
            report.warnings += paging.warnings
        }
        report.sizesProbed += try mergePage(&items, sizer: &sizer, merge: &merge)
        while var page = try handoff.take() {
            report.sizesProbed += try mergePage(&page, sizer: &sizer, merge: &merge)
        }
        let merged = try record { try merge!.finish(title: feed.title, isComplete: true) }
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
        return .merged(merged)
    }

    /// Sizes one page's items and merges them, in a transaction of their own; returns how
    /// many URLs it probed for sizes.
    private func mergePage(_ items: inout [FeedItem], sizer: inout CatalogSizer,
                           merge: inout PagedCatalogMerge?) throws(SyncFailure) -> Int {
        var entries = items.map(CatalogEntry.init)
        items = []
        let probed = try record { try sizer.size(&entries) }
        try record { try merge!.merge(page: entries) }
        return probed
    }

    private func parse(_ document: FeedFetcher.Document, kindHint: OfflineFeeds.FeedKind?) throws(SyncFailure) -> ParsedFeed {
        do {
            return try FeedParser.parse(document.body, kind: kindHint, baseURL: document.effectiveURL,
                                        limits: settings.feedLimits)
        } catch {
            throw SyncFailure("\(document.effectiveURL.absoluteString): \(error.message)")
        }
    }

    /// What the paging thread keeps: its own until the merging thread has waited for it.
    private final class Paging: @unchecked Sendable {
        var seenIDs = Set<String>()
        var pagesFetched: Int
        var warnings: [String] = []
        init(pagesFetched: Int) { self.pagesFetched = pagesFetched }
    }

    /// Hands on the new items of every `next` page, stopping at loops and at the page and item
    /// caps (checked before a page is handed on, so a catalog over the cap merges no more).
    private func followPages(from feed: ParsedFeed, fetcher: FeedFetcher, seenIDs: inout Set<String>,
                             pagesFetched: inout Int, warnings: inout [String],
                             each: ([FeedItem]) throws(SyncFailure) -> Void) throws(SyncFailure) {
        var seenPages: Set<String> = []
        var next = feed.nextPageURL
        while let url = next {
            guard seenPages.insert(url).inserted else {
                warnings.append("catalog paging loops back to \(url); stopped there")
                return
            }
            guard pagesFetched < settings.maxPages else {
                throw SyncFailure("catalog has more than \(settings.maxPages) pages")
            }
            let document = try fetcher.fetchPage(url: url)
            pagesFetched += 1
            var page = try parse(document, kindHint: feed.kind)
            warnings += page.warnings
            let items = page.items.filter { seenIDs.insert($0.contentID).inserted }
            page.items = []
            guard seenIDs.count <= settings.feedLimits.maxItems else {
                throw SyncFailure("catalog lists more than \(settings.feedLimits.maxItems) items")
            }
            try each(items)
            next = page.nextPageURL
        }
    }

    /// Store errors end the sync with the store's message.
    private func record<T>(_ body: () throws -> T) throws(SyncFailure) -> T {
        do { return try body() } catch { throw SyncFailure("library database: \(error)") }
    }
}
