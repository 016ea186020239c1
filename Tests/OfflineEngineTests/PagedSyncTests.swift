import Foundation
import OfflineEngine
import OfflineFeeds
import OfflineStore
import OfflineTestSupport
import Testing

/// A paged catalog is merged page by page as it arrives: what a page brought is committed
/// with it, and only the end of the catalog removes what it no longer lists.
@Suite struct PagedSyncTests {
    /// A two-page JSON catalog listing `first` then `second` (content ids, which are also titles).
    private static func serve(_ origin: TestOrigin, first: [String], second: [String]) -> String {
        func items(_ ids: [String]) -> String {
            ids.map { #"{"id": "\#($0)", "title": "\#($0)", "type": "video", "url": "/media/\#($0).mp4", "size": 1000}"# }
                .joined(separator: ", ")
        }
        origin.serveFeed(path: "/p2.json", json: #"{"offlinefs": 1, "items": [\#(items(second))]}"#)
        return origin.serveFeed(path: "/p1.json", json: #"{"offlinefs": 1, "items": [\#(items(first))], "next": "/p2.json"}"#)
    }

    private static func contentIDs(_ folder: URL) throws -> [String] {
        let store = try LibraryStore.open(folder: folder)
        defer { try? store.close() }
        return try store.items(matching: .all).map(\.item.contentID).sorted()
    }

    @Test(.timeLimit(.minutes(1)))
    func syncKilledBetweenPagesKeepsTheFirstPageAndTheNextSyncCompletes() throws {
        try #require(FileManager.default.isExecutableFile(atPath: CrashTests.executable),
                     "offlinefs not built at \(CrashTests.executable)")
        let origin = try TestOrigin()
        defer { origin.stop() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("offlinefs-paged-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let library = ["--library", folder.path]

        // Given a library synced from a two-page catalog
        let feed = Self.serve(origin, first: ["a", "b"], second: ["c", "old"])
        #expect(try ChildProcess.run([CrashTests.executable, "source", "add", "src", feed] + library, deadline: 20).status == 0)
        #expect(try ChildProcess.run([CrashTests.executable, "sync"] + library, deadline: 20).status == 0)
        #expect(try Self.contentIDs(folder) == ["a", "b", "c", "old"])

        // When the catalog changes (a new item on each page, one item gone) and the sync is
        // killed while it waits for the second page, once the first page is committed (the
        // second is asked for while the first merges)
        _ = Self.serve(origin, first: ["a", "b", "new1"], second: ["c", "new2"])
        origin.setFault("/p2.json", .stallBeforeHeaders(seconds: 30))
        origin.clearLog()
        let child = try ChildProcess.start([CrashTests.executable, "sync"] + library)
        let deadline = Date(timeIntervalSinceNow: 20)
        while try origin.requests(for: "/p2.json").isEmpty || !Self.contentIDs(folder).contains("new1"),
              Date() < deadline {
            usleep(10_000)
        }
        #expect(!origin.requests(for: "/p2.json").isEmpty, "the sync asked for the second page")
        child.kill(SIGKILL)
        #expect(child.wait(deadline: 5))

        // Then the first page's new item is listed and nothing left yet
        #expect(try Self.contentIDs(folder) == ["a", "b", "c", "new1", "old"])

        // And the next sync fetches the whole catalog again, lists every item, and removes the gone one
        origin.clearFaults()
        origin.releaseStalls()
        origin.clearLog()
        let next = try ChildProcess.run([CrashTests.executable, "sync"] + library, deadline: 20)
        #expect(next.status == 0, "\(next.stdout)\(next.stderr)")
        #expect(origin.requests(for: "/p1.json").first?.header("If-None-Match") == nil,
                "the interrupted sync's validators are not trusted")
        #expect(try Self.contentIDs(folder) == ["a", "b", "c", "new1", "new2"])
    }

    @Test func failedPageKeepsTheMergedPagesAndRemovesNothing() throws {
        // Given a source synced from a two-page catalog
        let origin = try TestOrigin()
        defer { origin.stop() }
        let feed = Self.serve(origin, first: ["a"], second: ["old"])
        let temp = try TemporaryLibrary()
        try temp.library.addSource(name: "src", feedURL: feed)
        #expect(try temp.library.sync().allSatisfy(\.succeeded))

        // When the catalog changes and its second page fails
        _ = Self.serve(origin, first: ["a", "new"], second: ["b"])
        origin.setFault("/p2.json", .status(500))
        let report = try #require(try temp.library.sync().first)

        // Then the sync failed, the first page's new item is listed (and reported for the
        // download behaviour), and the item the failed page no longer lists is still there
        #expect(!report.succeeded)
        #expect(report.merged?.added == 1)
        #expect(try temp.library.items().map(\.contentId).sorted() == ["a", "new", "old"])

        // And once the page answers, the next sync completes the catalog
        origin.clearFaults()
        #expect(try temp.library.sync().allSatisfy(\.succeeded))
        #expect(try temp.library.items().map(\.contentId).sorted() == ["a", "b", "new"])
    }

    @Test func catalogOverTheItemCapMergesNoPagePastIt() throws {
        // Given a two-page catalog of four items and a cap of three
        let origin = try TestOrigin()
        defer { origin.stop() }
        var settings = SyncSettings()
        settings.feedLimits.maxItems = 3
        let temp = try TemporaryLibrary(settings: settings)
        try temp.library.addSource(name: "src", feedURL: Self.serve(origin, first: ["a", "b"], second: ["c", "d"]))

        // When it syncs
        let report = try #require(try temp.library.sync().first)

        // Then the sync fails on the cap, and the page that crossed it was not merged
        #expect(!report.succeeded)
        #expect(report.summary.contains("more than 3 items"), "\(report.summary)")
        #expect(try temp.library.items().map(\.contentId).sorted() == ["a", "b"])
    }

    @Test func pagingThatLoopsBackStopsWithAWarningAndCompletes() throws {
        // Given a catalog whose second page points back at the first
        let origin = try TestOrigin()
        defer { origin.stop() }
        origin.serveFeed(path: "/p2.json", json: #"{"offlinefs": 1, "items": [{"id": "b", "title": "b", "type": "video", "url": "/b.mp4", "size": 1}], "next": "/p1.json"}"#)
        let feed = origin.serveFeed(path: "/p1.json", json: #"{"offlinefs": 1, "items": [{"id": "a", "title": "a", "type": "video", "url": "/a.mp4", "size": 1}], "next": "/p2.json"}"#)
        let temp = try TemporaryLibrary()
        try temp.library.addSource(name: "src", feedURL: feed)

        // When it syncs
        let report = try #require(try temp.library.sync().first)

        // Then both pages are listed, once each, and the loop is a warning
        #expect(report.succeeded, "\(report.summary)")
        #expect(report.warnings.contains { $0.contains("loops back") }, "\(report.warnings)")
        #expect(try temp.library.items().map(\.contentId).sorted() == ["a", "b"])
    }

    /// A JSON catalog of `pages` (content ids, which are also titles) at `/p1.json`,
    /// `/p2.json`…; an item listed as `"<id>?"` has no size and no media the origin serves.
    @discardableResult
    private static func serve(_ origin: TestOrigin, pages: [[String]]) -> String {
        func item(_ id: String) -> String {
            id.hasSuffix("?")
                ? #"{"id": "\#(id.dropLast())", "title": "\#(id.dropLast())", "type": "video", "url": "/missing/\#(id.dropLast()).mp4"}"#
                : #"{"id": "\#(id)", "title": "\#(id)", "type": "video", "url": "/media/\#(id).mp4", "size": 1000}"#
        }
        for (index, ids) in pages.enumerated() {
            let next = index + 1 < pages.count ? #", "next": "/p\#(index + 2).json""# : ""
            origin.serveFeed(path: "/p\(index + 1).json",
                             json: #"{"offlinefs": 1, "items": [\#(ids.map(item).joined(separator: ", "))]\#(next)}"#)
        }
        return origin.url("/p1.json")
    }

    @Test func unchangedFurtherPagesAreAskedConditionallyAndKeepTheirItems() throws {
        // Given a library synced from a three-page catalog
        let origin = try TestOrigin()
        defer { origin.stop() }
        let temp = try TemporaryLibrary()
        try temp.library.addSource(name: "src", feedURL: Self.serve(origin, pages: [["a", "b"], ["c", "d"], ["e"]]))
        #expect(try temp.library.sync().allSatisfy(\.succeeded))

        // When only the first page changes (a new item)
        Self.serve(origin, pages: [["a", "b", "new"], ["c", "d"], ["e"]])
        origin.clearLog()
        let report = try #require(try temp.library.sync().first)

        // Then the further pages are asked for with their validators and answer 304, and
        // their items stay listed: nothing is removed
        #expect(report.succeeded, "\(report.summary)")
        for page in ["/p2.json", "/p3.json"] {
            let requests = origin.requests(for: page)
            #expect(requests.map(\.status) == [304], "\(page): \(requests)")
            #expect(requests.first?.header("If-None-Match") != nil, "\(page) is asked for conditionally")
        }
        #expect(report.merged?.added == 1)
        #expect(report.merged?.removed == 0)
        #expect(report.merged?.unchanged == 5)
        #expect(try temp.library.items().map(\.contentId).sorted() == ["a", "b", "c", "d", "e", "new"])

        // And a further page that changes is fetched and merged again: its gone item leaves
        Self.serve(origin, pages: [["a", "b"], ["c", "d"], ["f"]])
        origin.clearLog()
        let changed = try #require(try temp.library.sync().first)
        #expect(changed.succeeded, "\(changed.summary)")
        #expect(origin.requests(for: "/p2.json").map(\.status) == [304])
        #expect(origin.requests(for: "/p3.json").map(\.status) == [200])
        #expect(try temp.library.items().map(\.contentId).sorted() == ["a", "b", "c", "d", "f"])
    }

    @Test func anItemAnUnchangedPageAlsoListsStaysWhenTheFirstListingGoes() throws {
        // Given a catalog that lists `x` on two pages (the first listing is merged)
        let origin = try TestOrigin()
        defer { origin.stop() }
        let temp = try TemporaryLibrary()
        try temp.library.addSource(name: "src", feedURL: Self.serve(origin, pages: [["a", "x"], ["x", "c"]]))
        #expect(try temp.library.sync().allSatisfy(\.succeeded))

        // When the first page drops it and the second is unchanged
        Self.serve(origin, pages: [["a", "new"], ["x", "c"]])
        origin.clearLog()
        #expect(try temp.library.sync().allSatisfy(\.succeeded))

        // Then the unchanged page still lists it
        #expect(origin.requests(for: "/p2.json").map(\.status) == [304])
        #expect(try temp.library.items().map(\.contentId).sorted() == ["a", "c", "new", "x"])
    }

    @Test func aPageWithASizeNotFoundIsFetchedWholeNextTime() throws {
        // Given a catalog whose second page has an item without a size the origin can tell
        let origin = try TestOrigin()
        defer { origin.stop() }
        let temp = try TemporaryLibrary()
        try temp.library.addSource(name: "src", feedURL: Self.serve(origin, pages: [["a"], ["b?", "c"], ["d"]]))
        #expect(try temp.library.sync().allSatisfy(\.succeeded))

        // When the first page changes
        Self.serve(origin, pages: [["a", "new"], ["b?", "c"], ["d"]])
        origin.clearLog()
        #expect(try temp.library.sync().allSatisfy(\.succeeded))

        // Then that page is fetched whole (its size is looked for again), the others not
        #expect(origin.requests(for: "/p2.json").map(\.status) == [200])
        #expect(origin.requests(for: "/p2.json").first?.header("If-None-Match") == nil)
        #expect(origin.requests(for: "/p3.json").map(\.status) == [304])
        #expect(try temp.library.items().map(\.contentId).sorted() == ["a", "b", "c", "d", "new"])
    }
}
