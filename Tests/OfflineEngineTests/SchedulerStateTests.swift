import Foundation
import OfflineEngine
import OfflineStore
import OfflineTestSupport
import Testing

/// Every state of DESIGN §1 reached through commands and the scheduler, against the test
/// origin, with a manual clock (no real waits).
@Suite struct SchedulerStateTests {
    @Test func queuedDownloadingCached() throws {
        let f = try EngineFixture()
        defer { f.close() }
        // Given a discovered item with a thumbnail and a subtitle track
        let item = try f.addItem("a.mp4", size: 200_000, thumbnail: true, subtitles: ["en"])
        f.start()
        // When it is downloaded
        let reply = try f.perform(.download(item: "src/a.mp4", options: DownloadOptions()))
        #expect(reply.contains("queued"))
        // Then it passes queued and downloading to cached, with its side files
        let done = try f.wait(item, .cached)
        #expect(done.requested)
        #expect(try f.transitions(item) == ["discovered→queued", "queued→downloading", "downloading→cached"])
        #expect(try f.store.bytesPresent(itemID: item.id, file: "thumbnail") == 3000)
        #expect(try f.store.bytesPresent(itemID: item.id, file: "subtitle.en") == 500)
        #expect(try f.store.usage(day: f.clock.now(), timeZone: EngineFixture.timeZone) == 200_000)
    }

    @Test func waitsQueuedForASlot() throws {
        let f = try EngineFixture(stallSeconds: 30)
        defer { f.close() }
        // Given one slot and a first item whose origin stalls
        try f.store.setPolicy(name: "max-concurrent-downloads", value: "1")
        let slow = try f.addItem("slow.mp4", size: 10_000)
        let next = try f.addItem("next.mp4", size: 10_000)
        f.origin.setFault("/slow.mp4", .stallBeforeHeaders(seconds: 30))
        f.start()
        // When both are requested
        try f.perform(.download(item: "src/slow.mp4", options: DownloadOptions()))
        try f.perform(.download(item: "src/next.mp4", options: DownloadOptions()))
        // Then the second waits queued until the first is paused
        try f.wait(slow, .downloading)
        #expect(try f.item(next).state == .queued)
        try f.perform(.pause(item: "src/slow.mp4"))
        try f.wait(slow, .paused)
        try f.wait(next, .cached)
    }

    @Test func pausedResumesOnlyWhenAsked() throws {
        let f = try EngineFixture(stallSeconds: 30)
        defer { f.close() }
        let item = try f.addItem("a.mp4", size: 50_000)
        f.origin.setFault("/a.mp4", .stallBeforeHeaders(seconds: 30))
        f.start()
        try f.perform(.download(item: "1", options: DownloadOptions()))
        try f.wait(item, .downloading)
        // When paused while downloading
        try f.perform(.pause(item: "1"))
        try f.wait(item, .paused)
        // Then time passing does not restart it …
        f.advance(3600)
        #expect(try f.item(item).state == .paused)
        // … but resume does
        f.origin.clearFaults()
        f.origin.releaseStalls()
        try f.perform(.resume(item: "1"))
        try f.wait(item, .cached)
        #expect(try f.transitions(item).contains("downloading→paused"))
    }

    @Test func cancelReturnsToDiscoveredWithoutBytes() throws {
        let f = try EngineFixture(stallSeconds: 30)
        defer { f.close() }
        // Given a download cut after 100 kB, then stalled
        let item = try f.addItem("a.mp4", size: 400_000)
        f.origin.setFault("/a.mp4", .truncate(afterBytes: 100_000), times: 1)
        f.start()
        try f.perform(.download(item: "src/a.mp4", options: DownloadOptions()))
        let idle = try f.wait(item, .idle)
        #expect(idle.error == .networkError)
        #expect(try f.store.bytesPresent(itemID: item.id) > 0)
        // When cancelled
        try f.perform(.cancel(item: "src/a.mp4"))
        // Then it is discovered again, not requested, with no byte claimed or on disk
        let cancelled = try f.item(item)
        #expect(cancelled.state == .discovered)
        #expect(cancelled.error == .cancelled)
        #expect(!cancelled.requested)
        #expect(try f.store.presentRanges(itemID: item.id, file: "media").isEmpty)
        // and no retry happens later
        f.advance(3600)
        #expect(try f.item(item).state == .discovered)
    }

    /// A script reads the state right after its command: a pause or a cancel of a running
    /// download is in the store when the command returns, not when the download's thread
    /// gets round to it.
    @Test func stoppingARunningDownloadIsInTheStoreWhenTheCommandReturns() throws {
        let f = try EngineFixture(stallSeconds: 30)
        defer { f.close() }
        // Given two running downloads whose origin has not answered yet
        let a = try f.addItem("a.mp4", size: 400_000)
        let b = try f.addItem("b.mp4", size: 400_000)
        f.origin.setFault("/a.mp4", .stallBeforeHeaders(seconds: 30))
        f.origin.setFault("/b.mp4", .stallBeforeHeaders(seconds: 30))
        f.start()
        try f.perform(.download(item: "src/a.mp4", options: DownloadOptions()))
        try f.perform(.download(item: "src/b.mp4", options: DownloadOptions()))
        try f.wait(a, .downloading)
        try f.wait(b, .downloading)
        // When one is paused and the other cancelled, the state is read at once
        try f.perform(.pause(item: "src/a.mp4"))
        #expect(try f.item(a).state == .paused)
        try f.perform(.cancel(item: "src/b.mp4"))
        let cancelled = try f.item(b)
        #expect(cancelled.state == .discovered)
        #expect(cancelled.error == .cancelled)
        #expect(!cancelled.requested)
        f.origin.releaseStalls()
    }

    /// A sync that moves a partly downloaded item's media: resume asks the new URL (from the
    /// bytes kept, the same file there), not the old one the download started from.
    @Test func resumeAfterTheCatalogMovedTheMediaAsksTheNewURL() throws {
        let f = try EngineFixture(stallSeconds: 30)
        defer { f.close() }
        // Given a download paused after 100 kB
        let item = try f.addItem("a.mp4", size: 400_000, seed: 7)
        f.origin.setFault("/a.mp4", .truncate(afterBytes: 100_000), times: 1)
        f.start()
        try f.perform(.download(item: "src/a.mp4", options: DownloadOptions()))
        try f.wait(item, .idle)
        try f.perform(.pause(item: "src/a.mp4"))
        let kept = try f.store.bytesPresent(itemID: item.id)
        #expect(kept > 0)
        // When a sync moves its media (the old URL gone) and it is resumed
        f.origin.serve("/moved/a.mp4", .generated(size: 400_000, seed: 7, contentType: "video/mp4"))
        f.origin.remove("/a.mp4")
        try f.moveMedia("a.mp4", to: "/moved/a.mp4")
        f.origin.clearLog()
        try f.perform(.resume(item: "src/a.mp4"))
        // Then it completes from the new URL, from the bytes it kept
        try f.wait(item, .cached)
        #expect(f.origin.requests(for: "/a.mp4").isEmpty)
        let moved = f.origin.requests(for: "/moved/a.mp4")
        #expect(moved.first?.header("range")?.hasPrefix("bytes=\(kept)-") == true, "\(moved)")
    }

    /// `lock` pins an item's files "so nothing evicts or deletes them": cancel neither.
    @Test func cancelKeepsTheBytesOfACachedOrLockedItem() throws {
        let f = try EngineFixture(stallSeconds: 30)
        defer { f.close() }
        // Given a cached item, and a locked one whose download stopped after 100 kB
        let cached = try f.addItem("c.mp4", size: 50_000)
        let locked = try f.addItem("a.mp4", size: 400_000)
        f.origin.setFault("/a.mp4", .truncate(afterBytes: 100_000), times: 1)
        f.start()
        try f.perform(.download(item: "src/c.mp4", options: DownloadOptions()))
        try f.wait(cached, .cached)
        try f.perform(.lock(item: "src/a.mp4"))
        try f.perform(.download(item: "src/a.mp4", options: DownloadOptions()))
        try f.wait(locked, .idle)
        let partial = try f.store.bytesPresent(itemID: locked.id)
        #expect(partial > 0)
        // When each is cancelled
        #expect(try f.perform(.cancel(item: "src/c.mp4")).contains("nothing to cancel (cached)"))
        #expect(throws: EngineError.self) { try f.perform(.cancel(item: "src/a.mp4")) }
        // Then both keep their bytes and states
        #expect(try f.item(cached).state == .cached)
        #expect(try f.store.bytesPresent(itemID: cached.id) == 50_000)
        #expect(try f.item(locked).state == .idle)
        #expect(try f.store.bytesPresent(itemID: locked.id) == partial)
    }

    /// A cancel forgets an HLS item's chosen rendition (the next download chooses again) and
    /// chooses again at once, so its `.m3u8` keeps its size instead of listing as empty.
    @Test func aCancelledStreamIsPreparedAgain() throws {
        let f = try EngineFixture(stallSeconds: 30)
        defer { f.close() }
        try HLSFixtureStreams.serve("ts", on: f.origin)
        let item = try f.addEntry(CatalogEntry(contentID: "show", title: "show", type: .hls,
                                               mediaURL: f.origin.url("/hls/ts/master.m3u8"),
                                               mimeType: "application/vnd.apple.mpegurl"))
        // Given a stream downloading, its third segment stalled
        f.origin.setFault("/hls/ts/high/segment-02.ts", .stallBeforeHeaders(seconds: 30))
        f.start()
        try f.perform(.download(item: "src/show", options: DownloadOptions()))
        try f.wait(item, .downloading)
        var deadline = ContinuousClock.now + .seconds(10)
        while f.origin.requests(for: "/hls/ts/high/segment-02.ts").isEmpty, ContinuousClock.now < deadline { usleep(2000) }
        let chosen = try #require(try f.store.hlsStream(itemID: item.id)).chosenAt
        // When it is cancelled
        f.clock.advance(by: 60)
        try f.perform(.cancel(item: "src/show"))
        try f.wait(item, .discovered)
        f.origin.releaseStalls()
        // Then its segments are gone, and a rendition is chosen again, later than the first
        #expect(try f.store.bytesPresent(itemID: item.id) == 0)
        deadline = ContinuousClock.now + .seconds(10)
        // (The choice reaches the store, then the registry: wait for both.)
        while (try f.store.hlsStream(itemID: item.id)?.chosenAt ?? chosen) <= chosen || f.engine.transfers.hls.stream(itemID: item.id) == nil,
              ContinuousClock.now < deadline { usleep(2000) }
        #expect(try #require(try f.store.hlsStream(itemID: item.id)).chosenAt > chosen)
        #expect(f.engine.transfers.hls.stream(itemID: item.id) != nil)
        #expect(try f.item(item).state == .discovered)
    }

    @Test func deleteLeavesATombstoneThatSyncDoesNotResurrect() throws {
        let f = try EngineFixture()
        defer { f.close() }
        let item = try f.addItem("a.mp4", size: 20_000, thumbnail: true)
        f.start()
        try f.perform(.download(item: "src/a.mp4", options: DownloadOptions()))
        try f.wait(item, .cached)
        // When deleted
        try f.perform(.delete(item: "src/a.mp4"))
        // Then it is a tombstone without files, and a re-merge keeps it so
        #expect(try f.item(item).state == .deleted)
        #expect(!FileManager.default.fileExists(atPath: f.engine.transfers.fetcher.cacheFilePath(itemID: item.id, file: "media")))
        #expect(try f.store.bytesPresent(itemID: item.id, file: "thumbnail") == 0)
        try f.addItem("b.mp4", size: 10)
        #expect(try f.item(item).state == .deleted)
        // and an explicit download brings it back
        try f.perform(.download(item: "src/a.mp4", options: DownloadOptions()))
        try f.wait(item, .cached)
    }

    @Test func evictKeepsTheThumbnail() throws {
        let f = try EngineFixture()
        defer { f.close() }
        let item = try f.addItem("a.mp4", size: 20_000, thumbnail: true)
        f.start()
        try f.perform(.download(item: "src/a.mp4", options: DownloadOptions()))
        try f.wait(item, .cached)
        try f.perform(.evict(item: "src/a.mp4"))
        let evicted = try f.item(item)
        #expect(evicted.state == .discovered)
        #expect(evicted.bytesPresent == 0)
        #expect(try f.store.bytesPresent(itemID: item.id, file: "thumbnail") == 3000)
        // `evict … all` takes the thumbnail too.
        try f.perform(.evict(item: "src/a.mp4", sideFiles: true))
        #expect(try f.store.bytesPresent(itemID: item.id, file: "thumbnail") == 0)
        let thumbnail = f.engine.transfers.fetcher.cacheFilePath(itemID: item.id, file: "thumbnail")
        #expect(((try? FileManager.default.attributesOfItem(atPath: thumbnail))?[.size] as? Int ?? 0) == 0)
        #expect(try f.item(item).state == .discovered)
    }

    @Test func lockedItemsRefuseEvict() throws {
        let f = try EngineFixture()
        defer { f.close() }
        try f.addItem("a.mp4", size: 1000)
        f.start()
        try f.perform(.lock(item: "src/a.mp4"))
        #expect(try f.store.item(source: "src", contentID: "a.mp4")?.locked == true)
        #expect(throws: EngineError.self) { try f.perform(.evict(item: "src/a.mp4")) }
        try f.perform(.unlock(item: "src/a.mp4"))
        #expect(try f.store.item(source: "src", contentID: "a.mp4")?.locked == false)
    }

    @Test func unknownReferencesAreRefused() throws {
        let f = try EngineFixture()
        defer { f.close() }
        f.start()
        #expect(throws: EngineError.self) { try f.perform(.pause(item: "src/none")) }
        #expect(throws: EngineError.self) { try f.perform(.download(item: "nosource/x", options: DownloadOptions())) }
    }
}
