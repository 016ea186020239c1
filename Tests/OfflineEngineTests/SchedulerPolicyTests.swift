import Foundation
import OfflineEngine
import OfflineHTTP
import OfflineStore
import OfflineTestSupport
import Synchronization
import Testing

/// Each policy of DESIGN §1 stopping and releasing downloads while the engine runs.
@Suite struct SchedulerPolicyTests {
    @Test func fileSizeMaxIsOutOfPolicyUntilRaised() throws {
        let f = try EngineFixture()
        defer { f.close() }
        try f.store.setPolicy(name: "file-size-max", value: "1000")
        let item = try f.addItem("a.mp4", size: 5000)
        f.start()
        try f.perform(.download(item: "src/a.mp4", options: DownloadOptions()))
        #expect(try f.wait(item, .idle).error == .outOfPolicy)
        try f.perform(.setPolicy(name: "file-size-max", value: "unlimited"))
        try f.wait(item, .cached)
    }

    @Test func downloadWindowWaitsForItsOpening() throws {
        let f = try EngineFixture()  // 12:00 UTC
        defer { f.close() }
        try f.store.setPolicy(name: "download-window", value: "01:00-06:00")
        let item = try f.addItem("a.mp4", size: 5000)
        f.start()
        try f.perform(.download(item: "src/a.mp4", options: DownloadOptions()))
        #expect(try f.wait(item, .idle).error == .outOfPolicy)
        f.advance(12 * 3600)  // 00:00: still closed
        #expect(try f.item(item).state == .idle)
        f.advance(3600)  // 01:00: the window's timer fires
        try f.wait(item, .cached)
    }

    @Test func aDownloadRunningWhenTheWindowClosesStopsAndResumesAtItsOpening() throws {
        let f = try EngineFixture()  // 12:00 UTC
        defer { f.close() }
        try f.store.setPolicy(name: "download-window", value: "06:00-13:00")
        let item = try f.addItem("a.mp4", size: 400_000)
        f.origin.setFault("/a.mp4", .trickle(bytesPerSecond: 20_000))
        f.start()
        try f.perform(.download(item: "src/a.mp4", options: DownloadOptions()))
        try f.wait(item, .downloading)
        // When the window closes at 13:00 with the download running
        f.advance(3600)
        // Then it stops, named by the window, and keeps what it fetched
        let held = try f.wait(item, .idle)
        #expect(held.error == .outOfPolicy && held.errorDetail == "outside the download window 06:00-13:00")
        // And at the next opening it resumes and completes
        f.origin.clearFaults("/a.mp4")
        f.advance(17 * 3600)  // 06:00
        try f.wait(item, .cached)
    }

    @Test func dailyLimitWaitsForTheNextDay() throws {
        let f = try EngineFixture()
        defer { f.close() }
        try f.store.setPolicy(name: "daily-limit", value: "100000")
        let first = try f.addItem("a.mp4", size: 80_000)
        let second = try f.addItem("b.mp4", size: 50_000)
        f.start()
        try f.perform(.download(item: "src/a.mp4", options: DownloadOptions()))
        try f.wait(first, .cached)
        try f.perform(.download(item: "src/b.mp4", options: DownloadOptions()))
        #expect(try f.wait(second, .idle).error == .dailyLimit)
        f.advance(12 * 3600)  // midnight UTC
        try f.wait(second, .cached)
    }

    @Test func cacheLimitEvictsStreamedFirstAndRequestedOnlyWithAutoPurge() throws {
        let f = try EngineFixture()
        defer { f.close() }
        try f.store.setPolicy(name: "cache-limit", value: "100000")
        let streamed = try f.addItem("s.mp4", size: 60_000)
        let wanted = try f.addItem("w.mp4", size: 60_000)
        let more = try f.addItem("m.mp4", size: 60_000)
        f.start()
        // Given an item a program streamed whole (cached, never requested)
        try stream(f, streamed)
        #expect(try f.wait(streamed, .cached).requested == false)
        // When a requested item needs its room
        try f.perform(.download(item: "src/w.mp4", options: DownloadOptions()))
        try f.wait(wanted, .cached)
        // Then the streamed one was evicted for it
        #expect(try f.item(streamed).bytesPresent == 0)
        // A third requested item, asked for later, does not evict the requested one without auto-purge …
        f.advance(60)
        try f.perform(.download(item: "src/m.mp4", options: DownloadOptions()))
        #expect(try f.wait(more, .idle).error == .cacheLimit)
        // … nor a locked one with it …
        try f.perform(.lock(item: "src/w.mp4"))
        try f.perform(.setPolicy(name: "auto-purge", value: "on"))
        #expect(try f.item(more).state == .idle)
        // … but an unlocked one with auto-purge on
        try f.perform(.unlock(item: "src/w.mp4"))
        try f.wait(more, .cached)
        #expect(try f.item(wanted).bytesPresent == 0)
        #expect(try f.item(wanted).state == .discovered)
    }

    /// Downloads started together: each counts what the others are still to write, so the
    /// cache stays under its limit (three at once each found room for itself alone).
    @Test func concurrentDownloadsStayUnderTheCacheLimitTogether() throws {
        let f = try EngineFixture()
        defer { f.close() }
        try f.store.setPolicy(name: "cache-limit", value: "100000")
        let items = try ["a.mp4", "b.mp4", "c.mp4"].map { try f.addItem($0, size: 40_000) }
        for name in ["a.mp4", "b.mp4", "c.mp4"] { f.origin.setFault("/\(name)", .trickle(bytesPerSecond: 100_000)) }
        for name in ["a.mp4", "b.mp4", "c.mp4"] { try f.perform(.download(item: "src/\(name)", options: DownloadOptions())) }
        f.start()
        try waitUntil { try items.map { try f.item($0).state }.allSatisfy { $0 == .cached || $0 == .idle } }
        let states = try items.map { try f.item($0) }
        #expect(states.filter { $0.state == .cached }.count == 2, "\(states.map(\.state))")
        #expect(states.contains { $0.state == .idle && $0.error == .cacheLimit }, "\(states.map(\.state))")
        #expect(try f.store.totalBytesPresent() <= 100_000)
    }

    /// A queue larger than the cache, asked for at once: auto-purge does not evict what the
    /// queue downloaded to fit the rest of it (each fetched and dropped in turn, every wish but
    /// the last lost); a later wish still makes room with them.
    @Test func autoPurgeDoesNotEvictAQueueForItself() throws {
        let f = try EngineFixture()
        defer { f.close() }
        try f.store.setPolicy(name: "cache-limit", value: "100000")
        try f.store.setPolicy(name: "auto-purge", value: "on")
        try f.store.setPolicy(name: "max-concurrent-downloads", value: "1")
        let queue = try ["a.mp4", "b.mp4", "c.mp4"].map { try f.addItem($0, size: 60_000) }
        let later = try f.addItem("d.mp4", size: 60_000)
        f.start()
        // When three items that cannot all fit are asked for together
        for name in ["a.mp4", "b.mp4", "c.mp4"] { try f.perform(.download(item: "src/\(name)", options: DownloadOptions())) }
        // Then one is cached and the others wait for room, still asked for
        try waitUntil { try queue.map { try f.item($0).state }.filter { $0 == .idle }.count == 2 }
        let states = try queue.map { try f.item($0) }
        #expect(states.filter { $0.state == .cached }.count == 1, "\(states.map(\.state))")
        #expect(states.allSatisfy { $0.requested && ($0.state == .cached || $0.error == .cacheLimit) }, "\(states.map(\.state))")
        let requests = ["/a.mp4", "/b.mp4", "/c.mp4"].map { f.origin.requests(for: $0).count }
        #expect(requests.reduce(0, +) <= 2, "no item fetched, evicted and fetched again: \(requests)")
        // And a wish made later makes room with the one cached before it
        f.advance(60)
        try f.perform(.download(item: "src/d.mp4", options: DownloadOptions()))
        try f.wait(later, .cached)
        #expect(try queue.map { try f.item($0).bytesPresent }.allSatisfy { $0 == 0 })
    }

    @Test func freeSpaceReserveIsNoSpaceUntilSpaceIsFreed() throws {
        let free = Mutex<Int64>(10_000)
        let f = try EngineFixture { $0.freeSpace = { _ in free.withLock { $0 } } }
        defer { f.close() }
        try f.store.setPolicy(name: "free-space-reserve", value: "5000")
        let item = try f.addItem("a.mp4", size: 8000)
        f.start()
        try f.perform(.download(item: "src/a.mp4", options: DownloadOptions()))
        #expect(try f.wait(item, .idle).error == .noSpace)
        // Space freed by another program is seen at the next recheck
        free.withLock { $0 = 1 << 30 }
        f.advance(30)
        try f.wait(item, .cached)
    }

    @Test func downloadBehaviorAutoQueuesNewItemsAndThumbnailsFetchesThumbnails() throws {
        let f = try EngineFixture { $0.periodicSync = true }
        defer { f.close() }
        f.origin.serve("/a.mp4", .generated(size: 5000, seed: 1))
        f.origin.serve("/a.jpg", .generated(size: 700, seed: 2))
        f.origin.serve("/b.mp4", .generated(size: 5000, seed: 3))
        f.origin.serve("/b.jpg", .generated(size: 700, seed: 4))
        func feed(_ ids: [String]) -> String {
            let items = ids.map { #"{"id": "\#($0)", "title": "\#($0)", "type": "video", "url": "/\#($0).mp4", "size": 5000, "thumbnail": "/\#($0).jpg"}"# }
            return #"{"offlinefs": 1, "items": [\#(items.joined(separator: ","))]}"#
        }
        try f.store.setPolicy(name: "download-behavior", value: "thumbnails")
        f.origin.serve("/feed.json", .text(feed(["a"]), contentType: "application/json"))
        // The engine syncs the never-synced source at start
        f.start()
        let a = try waitForItem(f, "a")
        try waitUntil { try f.store.bytesPresent(itemID: a.id, file: "thumbnail") == 700 }
        #expect(try f.item(a).state == .discovered)
        // With auto, the next sync (one sync-interval later) queues the new item
        try f.store.setPolicy(name: "download-behavior", value: "auto")
        f.origin.serve("/feed.json", .text(feed(["a", "b"]), contentType: "application/json"))
        f.advance(3600)
        let b = try waitForItem(f, "b")
        try f.wait(b, .cached)
        #expect(try f.item(a).state == .discovered)
        #expect(f.origin.requests(for: "/feed.json").count == 2)
    }

    @Test func bytesStreamedPastTheCacheLimitAreEvictedOldestFirst() throws {
        let f = try EngineFixture()
        defer { f.close() }
        try f.store.setPolicy(name: "cache-limit", value: "100000")
        let first = try f.addItem("a.mp4", size: 60_000)
        let second = try f.addItem("b.mp4", size: 60_000)
        f.start()
        // Given two items programs streamed whole, 120,000 bytes against a limit of 100,000
        try stream(f, first)
        try f.wait(first, .cached)
        f.advance(1)
        try stream(f, second)
        try f.wait(second, .cached)
        // When the scheduler next checks the cache (at most once a second)
        f.advance(1)
        // Then the one streamed first is evicted, with one event for the streamed items
        try waitUntil { try f.item(first).bytesPresent == 0 }
        #expect(try f.item(second).bytesPresent == 60_000)
        #expect(try f.item(first).state == .discovered)
        let evictions = try f.store.events().filter { $0.kind == "evict" }.map(\.message)
        #expect(evictions == ["1 streamed item (60000 bytes): evicted for cache-limit"])
    }

    @Test func streamedItemsThatCoverTheExcessAreEvictedTogether() throws {
        // Given five items programs streamed whole, one a second: 150,000 bytes against 100,000
        let (f, items) = try streamedPastTheLimit(5, apart: 0.2)
        defer { f.close() }
        // When the scheduler next checks the cache
        f.advance(1)
        // Then the two streamed first go, which bring it under the limit, and no more: their
        // files leave the disk, and one event tells of both
        try waitUntil { try f.item(items[1]).bytesPresent == 0 }
        #expect(try items.map { try f.item($0).bytesPresent } == [0, 0, 30_000, 30_000, 30_000])
        #expect(try f.store.totalBytesPresent() == 90_000)
        for item in items.prefix(2) {
            let folder = f.engine.transfers.fetcher.cacheFolder.appendingPathComponent("\(item.id)").path
            #expect(!FileManager.default.fileExists(atPath: folder), "\(folder) is still there")
        }
        let evictions = try f.store.events().filter { $0.kind == "evict" }.map(\.message)
        #expect(evictions == ["2 streamed items (60000 bytes): evicted for cache-limit"])
    }

    /// A library read faster than one check evicts: the next check follows at once, not a
    /// second later, so the cache does not run ahead of its limit.
    @Test func aCheckThatReachesItsCapGoesOnWithoutWaitingOutTheInterval() throws {
        // Given six items programs streamed whole within a second: 180,000 bytes against 100,000
        let (f, items) = try streamedPastTheLimit(6, apart: 0) { $0.evictionsPerCheck = 2 }
        defer { f.close() }
        // When the scheduler next checks the cache, and the clock stands still after
        f.advance(1)
        // Then the three streamed first go, two in the first check and one in the next
        try waitUntil(timeout: .seconds(5)) { try f.store.totalBytesPresent() == 90_000 }
        #expect(try items.map { try f.item($0).bytesPresent } == [0, 0, 0, 30_000, 30_000, 30_000])
    }

    /// An engine with `cache-limit 100000` and `count` items of 30,000 bytes that programs
    /// streamed whole, `apart` seconds of the engine's clock apart.
    private func streamedPastTheLimit(_ count: Int, apart: TimeInterval,
                                      configure: (inout SchedulerConfiguration) -> Void = { _ in }) throws -> (EngineFixture, [Item]) {
        let f = try EngineFixture(configure: configure)
        do {
            try f.store.setPolicy(name: "cache-limit", value: "100000")
            let items = try (0..<count).map { try f.addItem("s\($0).mp4", size: 30_000, seed: UInt64($0 + 1)) }
            f.start()
            for item in items {
                try stream(f, item)
                try f.wait(item, .cached)
                if apart > 0 { f.advance(apart) }
            }
            return (f, items)
        } catch {
            f.close()
            throw error
        }
    }

    private func waitForItem(_ f: EngineFixture, _ id: String) throws -> Item {
        var found: Item?
        try waitUntil {
            found = try f.store.item(source: "src", contentID: id)
            return found != nil
        }
        return try #require(found)
    }

    /// Reads every byte through the byte source, as the mount does for a program.
    private func stream(_ f: EngineFixture, _ item: Item) throws {
        let done = DispatchSemaphore(value: 0)
        f.engine.transfers.fetcher.whenAvailable(itemID: item.id, file: "media", range: ByteRange(0, item.size ?? 0),
                                                 readAhead: 0, deadline: .now + .seconds(10)) { _ in done.signal() }
        done.wait()
    }
}

/// Polls `condition` (bounded) for what another thread will make true.
func waitUntil(timeout: Duration = .seconds(15), sourceLocation: SourceLocation = #_sourceLocation,
               _ condition: () throws -> Bool) throws {
    let deadline = ContinuousClock.now + timeout
    while try !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("condition not met in \(timeout)", sourceLocation: sourceLocation)
            return
        }
        usleep(2000)
    }
}
