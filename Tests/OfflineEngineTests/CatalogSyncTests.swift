import Foundation
import OfflineEngine
import OfflineStore
import OfflineTestSupport
import Testing

@Suite("Syncing feeds into the library")
struct CatalogSyncTests {
    @Test func rssAtomAndPagedJSONCatalogAreListedWithSizesAndCategories() throws {
        // Given an origin serving an RSS podcast, an Atom feed and a two-page JSON catalog
        let origin = try TestOrigin()
        defer { origin.stop() }
        let rss = origin.serveFeed(path: "/owls.rss", xml: SyncFixtures.podcastRSS(origin: origin))
        let atom = origin.serveFeed(path: "/lectures.atom", xml: SyncFixtures.atom(origin: origin),
                                    contentType: "application/atom+xml")
        let json = origin.serveFeed(path: "/acme/page1.json", json: SyncFixtures.catalogPage1(origin: origin))
        origin.serveFeed(path: "/acme/page2.json", json: SyncFixtures.catalogPage2(origin: origin))
        let temp = try TemporaryLibrary()
        let library = temp.library
        try library.addSource(name: "owls", feedURL: rss)
        try library.addSource(name: "lectures", feedURL: atom)
        try library.addSource(name: "acme", feedURL: json)

        // When every source syncs
        let reports = try library.sync()

        // Then all three succeed and every item is listed with its title, size and categories
        let failures = reports.filter { !$0.succeeded }.map(\.summary)
        #expect(failures.isEmpty, "\(failures)")
        let items = try library.items()
        let byID = Dictionary(uniqueKeysWithValues: items.map { ("\($0.source)/\($0.contentId)", $0) })
        #expect(byID.count == 6)
        #expect(byID["owls/owl-1"]?.title == "Episode 1: Owls")
        #expect(byID["owls/owl-1"]?.size == 10_000)
        #expect(byID["owls/owl-2"]?.categories.sorted() == ["Nature", "Night"])
        #expect(byID["lectures/urn:lecture:rivers"]?.size == 30_000)
        #expect(byID["lectures/urn:lecture:rivers"]?.categories == ["Science"])
        #expect(byID["acme/ep-001"]?.categories.sorted() == ["Family", "News/Local/Downtown"])
        #expect(byID["acme/ep-003"]?.title == "Picnic", "the item on the next page is listed")
        #expect(byID["acme/ep-003"]?.size == 6000)
        #expect(byID["acme/ep-001"]?.fileName == "Launch Day [ep-001].mp4")
        #expect(byID["acme/ep-001"]?.path == "sources/acme/Launch Day [ep-001].mp4")
        #expect(items.allSatisfy { $0.state == "discovered" })
        #expect(try library.items(ItemFilter(categoryPath: ["News"])).map(\.contentId).sorted() == ["ep-001", "ep-002"])
    }

    @Test func resyncOfAnUnchangedFeedIsConditionalAndChangesNothing() throws {
        // Given a synced RSS source
        let origin = try TestOrigin()
        defer { origin.stop() }
        let rss = origin.serveFeed(path: "/owls.rss", xml: SyncFixtures.podcastRSS(origin: origin))
        let temp = try TemporaryLibrary()
        try temp.library.addSource(name: "owls", feedURL: rss)
        _ = try temp.library.sync()
        let before = try temp.library.store.items(matching: .all)
        origin.clearLog()

        // When it syncs again and the feed has not changed
        let report = try #require(try temp.library.sync().first)

        // Then the request carried the validators, the origin said 304, and nothing changed
        let requests = origin.requests(for: "/owls.rss")
        #expect(requests.count == 1)
        #expect(requests.first?.header("If-None-Match") != nil)
        #expect(requests.first?.header("If-Modified-Since") != nil)
        #expect(requests.first?.status == 304)
        guard case .notModified = report.outcome else {
            Issue.record("expected not modified, got \(report.summary)")
            return
        }
        #expect(try temp.library.store.items(matching: .all) == before)
        // And `.events` says so, for a script that follows it for the sync's outcome
        let last = try #require(try temp.library.store.events().last)
        #expect(last.kind == .sync && last.message == "synced owls: not modified", "\(last)")
    }

    @Test func aChangedFeedAddsNewItemsAndDropsUndownloadedOnesThatLeft() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let rss = origin.serveFeed(path: "/owls.rss", xml: SyncFixtures.podcastRSS(origin: origin))
        let temp = try TemporaryLibrary()
        try temp.library.addSource(name: "owls", feedURL: rss)
        _ = try temp.library.sync()

        // When the feed drops episode 1 and gains episode 3
        let changed = SyncFixtures.podcastRSS(origin: origin)
            .replacingOccurrences(of: "owl-1", with: "owl-3")
            .replacingOccurrences(of: "Episode 1: Owls", with: "Episode 3: Moths")
        origin.serveFeed(path: "/owls.rss", xml: changed)
        let report = try #require(try temp.library.sync().first)

        // Then the listing follows the feed
        guard case .merged(let merge) = report.outcome else {
            Issue.record("expected a merge, got \(report.summary)")
            return
        }
        #expect(merge.added == 1)
        #expect(merge.removed == 1)
        #expect(try temp.library.items().map(\.contentId).sorted() == ["owl-2", "owl-3"])
    }

    @Test func sizesMissingFromTheFeedComeFromHeadRequestsOnce() throws {
        // Given a feed without enclosure lengths, whose media the origin serves
        let origin = try TestOrigin()
        defer { origin.stop() }
        origin.serve("/media/owl-1.mp3", .generated(size: 12_345, seed: 1))
        origin.serve("/media/owl-2.mp3", .generated(size: 67_890, seed: 2))
        let rss = origin.serveFeed(path: "/owls.rss", xml: SyncFixtures.podcastRSS(origin: origin, withLengths: false))
        let temp = try TemporaryLibrary()
        try temp.library.addSource(name: "owls", feedURL: rss)

        // When it syncs
        _ = try temp.library.sync()

        // Then the sizes are the origin's, learnt with HEAD requests
        let sizes = Dictionary(uniqueKeysWithValues: try temp.library.items().map { ($0.contentId, $0.size) })
        #expect(sizes["owl-1"] == 12_345)
        #expect(sizes["owl-2"] == 67_890)
        #expect(origin.requests.filter { $0.method == "HEAD" }.count == 2)

        // And a later full sync (the feed's validator changed) does not ask again
        origin.clearLog()
        origin.setFault("/owls.rss", .changeETagEachRequest)
        let report = try #require(try temp.library.sync().first)
        #expect(report.succeeded)
        #expect(origin.requests.filter { $0.method == "HEAD" }.isEmpty)
    }

    @Test func anHTTPErrorBecomesTheSourcesSyncError() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let temp = try TemporaryLibrary()
        try temp.library.addSource(name: "gone", feedURL: origin.url("/missing.rss"))

        let report = try #require(try temp.library.sync().first)

        #expect(!report.succeeded)
        let source = try #require(try temp.library.store.source(named: "gone"))
        #expect(source.lastSyncError?.contains("HTTP 404") == true, "\(source.lastSyncError ?? "nil")")
    }

    @Test func aDeadOriginIsAClearErrorNotAHang() throws {
        let origin = try TestOrigin()
        let url = origin.url("/owls.rss")
        origin.stop()
        let temp = try TemporaryLibrary()
        try temp.library.addSource(name: "owls", feedURL: url)

        let report = try #require(try temp.library.sync().first)

        #expect(!report.succeeded)
        #expect(try temp.library.store.source(named: "owls")?.lastSyncError?.contains("connect") == true)
    }

    @Test func unknownSourceNameIsAnError() throws {
        let temp = try TemporaryLibrary()
        #expect(throws: EngineError.notFound("no source named 'nope'")) { try temp.library.sync(sourceName: "nope") }
    }

    @Test(arguments: ["file:///etc/passwd", "ftp://example.com/feed.xml", "not a url", "http://"])
    func onlyHTTPFeedURLsCanBeAdded(url: String) throws {
        let temp = try TemporaryLibrary()
        #expect(throws: EngineError.self) { try temp.library.addSource(name: "bad", feedURL: url) }
        #expect(try temp.library.sources().isEmpty)
    }
}
