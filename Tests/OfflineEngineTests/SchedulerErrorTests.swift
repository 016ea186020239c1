import Foundation
import OfflineEngine
import OfflineStore
import OfflineTestSupport
import Synchronization
import Testing

/// Each error code of DESIGN §1 that a download or lookup can end with, the back-off and the
/// retry budget, with a manual clock.
@Suite struct SchedulerErrorTests {
    @Test func noNetworkIsIdleAndResumesWhenTheNetworkIsBack() throws {
        let f = try EngineFixture()
        defer { f.close() }
        let item = try f.addItem("a.mp4", size: 30_000)
        f.origin.goOffline()
        f.start()
        try f.perform(.download(item: "src/a.mp4", options: DownloadOptions()))
        let idle = try f.wait(item, .idle)
        #expect(idle.error == .noNetwork)
        // Back online: nothing happens before the back-off passes, then it resumes
        try f.origin.goOnline()
        f.advance(0.1)
        #expect(try f.item(item).state == .idle)
        f.advance(600)
        try f.wait(item, .cached)
    }

    @Test func stallIsTimeout() throws {
        let f = try EngineFixture(stallSeconds: 1)
        defer { f.close() }
        let item = try f.addItem("a.mp4", size: 30_000)
        f.origin.setFault("/a.mp4", .stallBeforeHeaders(seconds: 30))
        f.start()
        try f.perform(.download(item: "src/a.mp4", options: DownloadOptions()))
        #expect(try f.wait(item, .idle).error == .timeout)
    }

    @Test func connectionResetIsNetworkError() throws {
        let f = try EngineFixture()
        defer { f.close() }
        let item = try f.addItem("a.mp4", size: 300_000)
        f.origin.setFault("/a.mp4", .reset(afterBytes: 1000))
        f.start()
        try f.perform(.download(item: "src/a.mp4", options: DownloadOptions()))
        #expect(try f.wait(item, .idle).error == .networkError)
        // Transient: retried for ever with back-off, never failed
        f.origin.clearFaults()
        f.advance(600)
        try f.wait(item, .cached)
    }

    @Test func httpErrorSpendsTheRetryBudgetWithBackoff() throws {
        let f = try EngineFixture()
        defer { f.close() }
        try f.store.setPolicy(name: "retry-limit", value: "2")
        let item = try f.addItem("a.mp4", size: 30_000)
        f.origin.setFault("/a.mp4", .status(500))
        f.start()
        try f.perform(.download(item: "src/a.mp4", options: DownloadOptions()))
        #expect(try f.wait(item, .idle).error == .httpError)
        #expect(f.origin.requests(for: "/a.mp4").count == 1)
        // No retry before the back-off (at most 5 s for the first) …
        f.advance(1)
        #expect(f.origin.requests(for: "/a.mp4").count == 1)
        // … one after it, and failed once the budget (2 retries) is spent
        f.advance(10)
        try f.wait(item, .idle)
        #expect(f.origin.requests(for: "/a.mp4").count == 2)
        f.advance(20)
        let failed = try f.wait(item, .failed)
        #expect(failed.error == .httpError)
        #expect(f.origin.requests(for: "/a.mp4").count == 3)
        #expect(try f.store.presentRanges(itemID: item.id, file: "media").isEmpty)
        // Only an explicit request retries a failed item
        f.advance(3600)
        #expect(try f.item(item).state == .failed)
        f.origin.clearFaults()
        try f.perform(.download(item: "src/a.mp4", options: DownloadOptions()))
        try f.wait(item, .cached)
    }

    /// A busy origin (503, `Retry-After`) is asked again no sooner than it said, and never
    /// makes the item `failed`: being busy is not the item's fault.
    @Test func aBusyOriginIsAskedAgainAfterItsRetryAfterWithoutSpendingTheBudget() throws {
        let f = try EngineFixture()
        defer { f.close() }
        try f.store.setPolicy(name: "retry-limit", value: "1")
        let item = try f.addItem("a.mp4", size: 30_000)
        f.origin.setFault("/a.mp4", .busy(retryAfter: 30), times: 3)
        f.start()
        try f.perform(.download(item: "src/a.mp4", options: DownloadOptions()))
        let idle = try f.wait(item, .idle)
        #expect(idle.error == .httpError && idle.errorDetail?.contains("retry after 30 s") == true, "\(idle.errorDetail ?? "")")
        #expect(f.origin.requests(for: "/a.mp4").count == 1)
        // Not before its 30 s, however short the back-off
        f.advance(25)
        #expect(f.origin.requests(for: "/a.mp4").count == 1)
        // Busy three times, past the budget of one retry: idle each time, then cached
        for asked in 2...3 {
            f.advance(35)
            let deadline = ContinuousClock.now + .seconds(10)
            while f.origin.requests(for: "/a.mp4").count < asked, ContinuousClock.now < deadline { f.engine.scheduler.tickNow() }
            #expect(try f.wait(item, .idle).state == .idle)
        }
        f.advance(35)
        try f.wait(item, .cached)
    }

    @Test func wrongChecksumIsCorrupted() throws {
        let f = try EngineFixture()
        defer { f.close() }
        try f.store.setPolicy(name: "retry-limit", value: "0")
        let item = try f.addItem("a.mp4", size: 30_000)
        f.origin.serve("/a.mp4", .generated(size: 30_000, seed: 99))
        f.start()
        try f.perform(.download(item: "src/a.mp4", options: DownloadOptions()))
        #expect(try f.wait(item, .failed).error == .corrupted)
        #expect(try f.store.presentRanges(itemID: item.id, file: "media").isEmpty)
    }

    @Test func unsupportedItemIsDownloadFailed() throws {
        let f = try EngineFixture()
        defer { f.close() }
        try f.store.setPolicy(name: "retry-limit", value: "0")
        let item = try f.addItem("a.m3u8", size: 300, type: .hls)
        f.start()
        try f.perform(.download(item: "src/a.m3u8", options: DownloadOptions()))
        #expect(try f.wait(item, .failed).error == .downloadFailed)
    }

    /// A media URL that redirects to `file://` is refused like one that names it: `failed`
    /// once the retry budget is spent, never retried as a network error for ever.
    @Test func aRedirectToAnotherSchemeIsDownloadFailed() throws {
        let f = try EngineFixture()
        defer { f.close() }
        try f.store.setPolicy(name: "retry-limit", value: "0")
        let item = try f.addItem("a.mp4", size: 300)
        f.origin.redirect(from: "/a.mp4", to: "file:///etc/passwd")
        f.start()
        try f.perform(.download(item: "src/a.mp4", options: DownloadOptions()))
        let failed = try f.wait(item, .failed)
        #expect(failed.error == .downloadFailed)
        #expect(failed.errorDetail?.contains("http") == true, "\(failed.errorDetail ?? "")")
    }

    @Test func unknownContentIDIsContentNotFoundAfterFourLookups() throws {
        let f = try EngineFixture()
        defer { f.close() }
        f.origin.serve("/feed.json", .text(#"{"offlinefs": 1, "items": []}"#, contentType: "application/json"))
        f.start()
        // When an item unknown to the catalog is requested by content id
        let reply = try f.perform(.download(item: "src/ep-404", options: DownloadOptions()))
        #expect(reply.contains("metadata-pending"))
        let item = try #require(try f.store.item(source: "src", contentID: "ep-404"))
        // Then the first lookup runs at once and three more 10 s apart
        for lookupsSoFar in 1...3 {
            try waitForLookups(f, count: lookupsSoFar)
            #expect(try f.item(item).state == .metadataPending)
            f.advance(10)
        }
        let failed = try f.wait(item, .failed)
        #expect(failed.error == .contentNotFound)
        #expect(f.origin.requests(for: "/feed.json").count == 4)
        // And `ls` names it by its content id, with no path (it has no file in the mount)
        let listed = try #require(try f.library.items(ItemFilter(state: .failed)).first { $0.id == item.id })
        #expect(listed.fileName == "[ep-404]")
        #expect(listed.path == "")
        // And it can be deleted, though nothing of it was ever fetched (it was refused: "item
        // has no media to fetch", and `rm` of it failed with EIO)
        #expect(try f.perform(.delete(item: "src/ep-404")).contains("deleted"))
        #expect(try f.item(item).state == .deleted)
    }

    /// Waits until `count` lookups have reached the origin and the retry timer of the last one
    /// is armed (a timer alone may be an earlier one's, before the lookup has even started).
    private func waitForLookups(_ f: EngineFixture, count: Int) throws {
        let deadline = ContinuousClock.now + .seconds(10)
        repeat {
            f.engine.scheduler.tickNow()
            if f.origin.requests(for: "/feed.json").count >= count && f.clock.pendingTimers > 0 { return }
            usleep(1000)
        } while ContinuousClock.now < deadline
        Issue.record("lookup \(count) did not run and arm its retry")
    }

    @Test func lookupURLGivesMetadataThenDownloads() throws {
        let f = try EngineFixture()
        defer { f.close() }
        f.origin.serve("/ep-7.mp4", .generated(size: 40_000, seed: 7, contentType: "video/mp4"))
        let lookup = #"{"offlinefs": 1, "item": {"id": "ep-7", "title": "Seven", "type": "video", "url": "/ep-7.mp4", "size": 40000}}"#
        f.origin.serve("/items/ep-7", .text(lookup, contentType: "application/json"))
        let source = try #require(try f.store.source(named: "src"))
        try f.store.setLookupTemplate(sourceID: source.id, f.origin.url("/items/{id}"))
        f.start()
        try f.perform(.download(item: "src/ep-7", options: DownloadOptions()))
        let item = try #require(try f.store.item(source: "src", contentID: "ep-7"))
        let cached = try f.wait(item, .cached)
        #expect(cached.title == "Seven")
        #expect(try f.transitions(item).starts(with: ["metadata-pending→queued"]))
    }
}
