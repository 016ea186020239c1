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
            report.outcome = try syncOrThrow(source, report: &report, merge: &merge)
            // Also after a `304`: items a failed or older sync left unprepared get their turn.
            report.warnings += hls.prepare(sourceID: source.id)
        } catch {
            report.outcome = .failed(error.message)
            if let merge, merge.report != MergeReport() { report.partialMerge = merge.report }
            try? store.recordSync(sourceID: source.id, etag: nil, lastModified: nil, error: error.message, at: now())
        }
        recordWarnings(report.warnings, of: source)
        // The feed's pages, their items and the merge's page cache are freed now; malloc would
        // keep the pages for a mount's weeks (it gives back only the top of a heap by itself).
        csystem_release_free_memory()
        return report
    }

    /// Warnings shown in a sync's `warning` event; `offlinefs sync` prints them all.
    static let warningsInEvent = 5

    /// One `warning` event for a sync's warnings (an item skipped, a field cut): a sync run by
    /// a mount or on schedule has no terminal to print them on.
    private func recordWarnings(_ warnings: [String], of source: Source) {
        guard !warnings.isEmpty else { return }
        let shown = warnings.prefix(Self.warningsInEvent).joined(separator: "; ")
        let more = warnings.count > Self.warningsInEvent ? " (and \(warnings.count - Self.warningsInEvent) more)" : ""
        let count = warnings.count == 1 ? "1 warning" : "\(warnings.count) warnings"
        _ = try? store.appendEvent(kind: .warning, sourceID: source.id, message: "\(source.name): \(count): \(shown)\(more)")
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
        let first = try fetcher.fetchPage(
            url: source.feedURL,
            etag: trusted ? source.etag : nil,
            lastModified: trusted ? source.lastModified : nil)
        report.pagesFetched = 1
        guard case .document(var firstDocument) = first else {
            try record { try store.recordSync(sourceID: source.id, etag: source.etag, lastModified: source.lastModified, error: nil, at: now()) }
            // A script that follows `.events` for a sync's outcome sees this one too.
            _ = try? store.appendEvent(kind: .sync, sourceID: source.id, message: "synced \(source.name): not modified")
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
        // Every item goes to the merge, a later page's duplicate too: the merge keeps the first
        // listing, and a page's record must list all its items (`CatalogPage`).
        for item in feed.items { paging.seenIDs.insert(item.contentID) }
        var items = feed.items
        feed.items = []
        let recorded = trusted ? try record { try store.catalogPages(sourceID: source.id) } : [:]
        // The next pages are fetched and parsed on a thread of their own while this one merges.
        let handoff = PageHandoff<FurtherPage>()
        let pagesDone = DispatchSemaphore(value: 0)
        let pagingFeed = feed
        let pager = Thread { [self] in
            csystem_name_this_thread("ofs-sync-pages")
            defer { pagesDone.signal() }
            do throws(SyncFailure) {
                try followPages(from: pagingFeed, recorded: recorded, fetcher: fetcher, seenIDs: &paging.seenIDs,
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
        report.sizesProbed += try mergePage(&items, recording: nil, sizer: &sizer, merge: &merge)
        // The further pages merge with a larger page cache: they touch the index pages the
        // pages before them did. A page merged alone (a feed of one page, or the one page
        // that changed) does not need it.
        try store.withMergeCache { () throws(SyncFailure) in
            while let page = try handoff.take() {
                switch page {
                case .fetched(var items, let page):
                    report.sizesProbed += try mergePage(&items, recording: page, sizer: &sizer, merge: &merge)
                case .unchanged(let url):
                    guard try record({ try merge!.keepUnchangedPage(url: url) }) else {
                        throw SyncFailure("\(url) was not modified, but the library has no record of its items")
                    }
                }
            }
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

    /// Sizes one page's items and merges them, in a transaction of their own, recording a
    /// further page (`page`); returns how many URLs it probed for sizes.
    private func mergePage(_ items: inout [FeedItem], recording page: CatalogPage?, sizer: inout CatalogSizer,
                           merge: inout PagedCatalogMerge?) throws(SyncFailure) -> Int {
        var entries = items.map(CatalogEntry.init)
        items = []
        let probed = try record { try sizer.size(&entries) }
        var page = page
        if !entries.allSatisfy(\.isSized) {
            // A size a probe did not find is asked for again at the next sync, which a `304`
            // would skip: this page is fetched whole next time.
            page?.etag = nil
            page?.lastModified = nil
        }
        try record { try merge!.merge(page: entries, recording: page) }
        return probed
    }

    /// A further page as the paging thread hands it on.
    private enum FurtherPage: Sendable {
        /// Fetched and parsed: its items, and its record for the next sync.
        case fetched([FeedItem], CatalogPage)
        /// Answered `304` to the validators of its record: its items stay as they are.
        case unchanged(url: String)
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

    /// Hands on every `next` page, fetched or unchanged, stopping at loops and at the page and
    /// item caps (checked before a page is handed on, so a catalog over the cap merges no
    /// more). A page the last sync recorded is asked for conditionally (`recorded`).
    private func followPages(from feed: ParsedFeed, recorded: [String: CatalogPage], fetcher: FeedFetcher,
                             seenIDs: inout Set<String>, pagesFetched: inout Int, warnings: inout [String],
                             each: (FurtherPage) throws(SyncFailure) -> Void) throws(SyncFailure) {
        var seenPages: Set<String> = []
        // Items of unchanged pages, counted against the cap without their content ids.
        var unchangedItems = 0
        var next = feed.nextPageURL
        while let url = next {
            guard seenPages.insert(url).inserted else {
                warnings.append("catalog paging loops back to \(url); stopped there")
                return
            }
            guard pagesFetched < settings.maxPages else {
                throw SyncFailure("catalog has more than \(settings.maxPages) pages")
            }
            let previous = recorded[url].flatMap { $0.hasValidators ? $0 : nil }
            let answer = try fetcher.fetchPage(url: url, etag: previous?.etag, lastModified: previous?.lastModified)
            pagesFetched += 1
            let page: FurtherPage
            switch answer {
            case .notModified:
                guard let previous else { throw SyncFailure("HTTP 304 from \(url) to a request that was not conditional") }
                unchangedItems += previous.itemCount
                page = .unchanged(url: url)
                next = previous.nextURL
            case .document(let document):
                let parsed = try parse(document, kindHint: feed.kind)
                warnings += parsed.warnings
                for item in parsed.items { seenIDs.insert(item.contentID) }
                page = .fetched(parsed.items, CatalogPage(url: url, etag: document.etag, lastModified: document.lastModified,
                                                          nextURL: parsed.nextPageURL))
                next = parsed.nextPageURL
            }
            guard seenIDs.count + unchangedItems <= settings.feedLimits.maxItems else {
                throw SyncFailure("catalog lists more than \(settings.feedLimits.maxItems) items")
            }
            try each(page)
        }
    }

    /// Store errors end the sync with the store's message.
    private func record<T>(_ body: () throws -> T) throws(SyncFailure) -> T {
        do { return try body() } catch { throw SyncFailure("library database: \(error)") }
    }
}
