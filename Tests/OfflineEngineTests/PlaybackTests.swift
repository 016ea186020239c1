import Foundation
@testable import OfflineEngine
import OfflineStore
import OfflineTestSupport
import Testing

/// What counts as playback and what it leaves (docs/playback.md): a player's reads, the
/// `played`/`watched` commands, and `delete-watched-after`.
@Suite("Playback")
struct PlaybackTests {
    // MARK: - The rule, as tables

    /// (reads as offset/length in KiB of a 1 MiB file, where the player is, how far it got) in KiB.
    static let runs: [([(Int64, Int64)], Int64?, Int64?)] = [
        ([], nil, nil),
        // Under the threshold (a tenth of the file): not playback yet.
        ([(0, 64)], nil, nil),
        ([(0, 128)], 128, 128),
        ([(0, 128), (128, 128), (256, 128)], 384, 384),
        // The kernel's read-ahead arrives out of order: still one run.
        ([(0, 128), (256, 128), (128, 128)], 384, 384),
        // An MP4 index read at the end before playing from the start does not count.
        ([(960, 64), (0, 128), (128, 128)], 256, 256),
        ([(0, 512), (512, 64)], 576, 576),
        ([(0, 900), (200, 128)], 900, 900),
    ]

    @Test(arguments: runs)
    func aRunCountsOnceItIsPlayback(reads: [(Int64, Int64)], current: Int64?, furthest: Int64?) {
        var run = PlaybackRun(threshold: LicenceClock.playbackThreshold(size: 1 << 20))
        for (offset, length) in reads { run.note(offset: offset << 10, length: length << 10) }
        #expect(run.current == current.map { $0 << 10 })
        #expect(run.furthest == furthest.map { $0 << 10 })
    }

    @Test func aSeekBackCountsOncePlayedOn() {
        var run = PlaybackRun(threshold: 100)
        run.note(offset: 0, length: 10_000_000)
        run.note(offset: 200, length: 50)  // a seek back to the start, not yet played on
        #expect(run.current == 10_000_000)
        run.note(offset: 250, length: 100)
        #expect(run.current == 350)
        #expect(run.furthest == 10_000_000)
    }

    @Test(arguments: [(100.0, 50.0), (3600, 3240), (600, 540), (300, 240), (30, 15)])
    func watchedFromIsNinetyPercentOrTheLastMinuteNeverBeforeTheMiddle(duration: Double, from: Double) {
        #expect(PlayRule.watchedFrom(duration: duration) == from)
    }

    @Test func secondsAreProportionalToBytes() {
        #expect(PlayRule.seconds(atByte: 500, size: 1000, duration: 60) == 30)
        #expect(PlayRule.seconds(atByte: 5000, size: 1000, duration: 60) == 60)
        #expect(PlayRule.seconds(atByte: 500, size: nil, duration: 60) == nil)
        #expect(PlayRule.seconds(atByte: 500, size: 1000, duration: nil) == nil)
        #expect(!PlayRule.isWatched(reached: 10_000, duration: nil))
    }

    // MARK: - Through the engine

    private func item(_ f: EngineFixture, _ name: String = "a.mp4", size: Int64 = 1 << 20, catalogSize: Int64? = nil,
                      duration: Double? = 1000) throws -> Item {
        f.origin.serve("/\(name)", .generated(size: size, seed: 3, contentType: "video/mp4"))
        return try f.addEntry(CatalogEntry(contentID: name, title: name, type: .video, mediaURL: f.origin.url("/\(name)"),
                                           size: catalogSize ?? size, mimeType: "video/mp4", duration: duration))
    }

    private func play(_ f: EngineFixture, _ item: Item, from start: Int64 = 0, to end: Int64, size: Int64 = 1 << 20) throws {
        let session = try #require(f.engine.transfers.fetcher.startPlayback(itemID: item.id, size: size))
        var offset = start
        while offset < end {
            // As a player plays: 128 KiB of a 1 MiB, 1000-second item last 125 seconds
            session.read(offset: offset, length: min(128 << 10, end - offset))
            f.clock.advance(by: 125)
            offset += 128 << 10
        }
        session.end()
        f.engine.playback.drain()
    }

    @Test func aPlayerThatStopsHalfwayLeavesItsResumePointThere() throws {
        let f = try EngineFixture()
        defer { f.close() }
        let a = try item(f)
        f.start()
        try play(f, a, to: 512 << 10)
        let played = try f.item(a)
        #expect(played.position == 500)
        #expect(!played.watched)
        #expect(played.lastPlayedAt == f.clock.now())
        // Played on from there to the end: watched, and the resume point goes back to 0.
        try play(f, a, from: 512 << 10, to: 1 << 20)
        #expect(try f.item(a).watched)
        #expect(try f.item(a).position == 0)
    }

    /// mpv's cache reads a file far ahead of what it plays (a whole 4-minute film in a few
    /// seconds): a 3-second look made the item watched, and `delete-watched-after` then
    /// evicted it. A player's reads count as played no faster than real time.
    @Test func readsFarAheadOfRealTimeCountOnlyAsFarAsTheTimeTheyTook() throws {
        let f = try EngineFixture()
        defer { f.close() }
        let a = try item(f, size: 4 << 20, duration: 240)  // 4 minutes, 17.5 KiB a second
        f.start()
        let session = try #require(f.engine.transfers.fetcher.startPlayback(itemID: a.id, size: 4 << 20))
        for piece in Int64(0)..<32 {  // the whole file in 128 KiB reads, 0.1 s apart
            session.read(offset: piece << 17, length: 128 << 10)
            f.clock.advance(by: 0.1)
        }
        session.end()
        f.engine.playback.drain()
        let looked = try f.item(a)
        #expect(!looked.watched)
        // 3.1 s of reads and the last read's 128 KiB (7.5 s): about 10 s in
        #expect(looked.position.map { (9...12).contains($0) } == true, "\(String(describing: looked.position))")
        // The same reads over the film's length: watched
        let played = try #require(f.engine.transfers.fetcher.startPlayback(itemID: a.id, size: 4 << 20))
        for piece in Int64(0)..<32 {
            played.read(offset: piece << 17, length: 128 << 10)
            f.clock.advance(by: 7.5)
        }
        played.end()
        f.engine.playback.drain()
        #expect(try f.item(a).watched)
    }

    @Test func withoutADurationReadsSetNoPositionAndNeverWatch() throws {
        let f = try EngineFixture()
        defer { f.close() }
        let a = try item(f, duration: nil)
        f.start()
        try play(f, a, to: 1 << 20)
        let played = try f.item(a)
        #expect(played.position == nil && !played.watched && played.lastPlayedAt != nil)
    }

    /// A player's read of an HLS part (a session without a size) sets `last-played`; its
    /// offsets are places in the stream, so no resume point and no watched mark.
    @Test func readsOfAStreamsPartSetLastPlayedOnly() throws {
        let f = try EngineFixture()
        defer { f.close() }
        let a = try item(f)
        f.start()
        let session = try #require(f.engine.transfers.fetcher.startPlayback(itemID: a.id, size: nil))
        session.read(offset: 900 << 10, length: 64 << 10)
        session.end()
        f.engine.playback.drain()
        let played = try f.item(a)
        #expect(played.lastPlayedAt == f.clock.now())
        #expect(played.position == nil && !played.watched)
        // A part opened and closed unread is no playback.
        f.clock.advance(by: 5)
        try #require(f.engine.transfers.fetcher.startPlayback(itemID: a.id, size: nil)).end()
        f.engine.playback.drain()
        #expect(try f.item(a).lastPlayedAt == played.lastPlayedAt)
    }

    @Test func aMarkDuringAPlaybackWinsOverItsReads() throws {
        let f = try EngineFixture()
        defer { f.close() }
        let a = try item(f)
        f.start()
        let session = try #require(f.engine.transfers.fetcher.startPlayback(itemID: a.id, size: 1 << 20))
        session.read(offset: 0, length: 1 << 20)
        f.clock.advance(by: 5)
        try f.perform(.setWatched(item: "src/a.mp4", false))
        try f.perform(.setPosition(item: "src/a.mp4", seconds: 42))
        session.end()
        f.engine.playback.drain()
        #expect(try f.item(a).position == 42)
        #expect(try !f.item(a).watched)
    }

    /// A resume point past the item's end (1e9 s of a 1000 s item) is refused; its end is not.
    @Test func aPositionPastTheEndIsRefused() throws {
        let f = try EngineFixture()
        defer { f.close() }
        let a = try item(f, duration: 1000)
        f.start()
        #expect(throws: EngineError.self) { try f.perform(.setPosition(item: "src/a.mp4", seconds: 1e9)) }
        #expect(try f.item(a).position == nil)
        try f.perform(.setPosition(item: "src/a.mp4", seconds: 1000))
        #expect(try f.item(a).position == 1000)
    }

    @Test func playedCommandsSetTheResumePointAndTheWatchedMark() throws {
        let f = try EngineFixture()
        defer { f.close() }
        let a = try item(f)
        f.start()
        #expect(try f.perform(.played(item: "src/a.mp4", span: PlayedSpan(start: 0, end: 30))) == "a.mp4 [a.mp4].mp4: played to 0:30")
        #expect(try f.item(a).position == 30 && !f.item(a).watched)
        #expect(try f.item(a).lastPlayedAt == f.clock.now())
        #expect(try f.perform(.played(item: "src/a.mp4", span: PlayedSpan(start: 30, end: 960)))
            == "a.mp4 [a.mp4].mp4: played to 16:00, watched")
        #expect(try f.item(a).position == 0 && f.item(a).watched)
        try f.perform(.setWatched(item: "src/a.mp4", false))
        #expect(try !f.item(a).watched)
        #expect(try f.perform(.played(item: "src/a.mp4")) == "a.mp4 [a.mp4].mp4: played, watched")
        #expect(try f.item(a).watched)
    }

    @Test func deleteWatchedAfterEvictsWatchedItemsButNotLockedOnes() throws {
        let f = try EngineFixture()
        defer { f.close() }
        let a = try item(f, "a.mp4"), b = try item(f, "b.mp4")
        f.start()
        for name in ["a.mp4", "b.mp4"] { try f.perform(.download(item: "src/\(name)", options: DownloadOptions())) }
        try f.wait(a, .cached)
        try f.wait(b, .cached)
        try f.perform(.lock(item: "src/b.mp4"))
        try f.perform(.setPolicy(name: "delete-watched-after", value: "1d"))
        try f.perform(.played(item: "src/a.mp4"))
        try f.perform(.played(item: "src/b.mp4"))
        f.advance(86_400 - 60)
        #expect(try f.item(a).state == .cached)
        f.advance(120)
        let evicted = try f.wait(a, .discovered)
        #expect(evicted.bytesPresent == 0 && evicted.watched)
        #expect(try f.item(b).state == .cached)
        #expect(try f.store.events(after: 0, limit: 10_000).contains {
            $0.itemID == a.id && $0.message.contains("delete-watched-after")
        })
    }

    /// An episode watched long ago and asked for again: it is kept (downloaded, then evicted
    /// at once, it could not be heard again), until it is watched again.
    @Test func deleteWatchedAfterKeepsAnItemAskedForAgainUntilItIsWatchedAgain() throws {
        let f = try EngineFixture()
        defer { f.close() }
        let a = try item(f, "a.mp4")
        f.start()
        try f.perform(.setPolicy(name: "delete-watched-after", value: "1h"))
        try f.perform(.played(item: "src/a.mp4"))
        f.advance(7200)
        // When it is asked for two hours after it was watched
        try f.perform(.download(item: "src/a.mp4", options: DownloadOptions()))
        try f.wait(a, .cached)
        f.advance(7200)
        // Then it stays, still marked watched
        #expect(try f.item(a).state == .cached && f.item(a).watched)
        // Until it is watched again and the delay passes
        try f.perform(.played(item: "src/a.mp4"))
        f.advance(3660)
        #expect(try f.wait(a, .discovered).bytesPresent == 0)
    }

    /// With the catalog's size, or a wrong one (the origin's is 64 MiB): lines give the origin's.
    @Test(arguments: [64 << 20, 1000] as [Int64])
    func aDownloadWritesProgressLinesWhileItRuns(catalogSize: Int64) throws {
        let f = try EngineFixture()
        defer { f.close() }
        let size: Int64 = 64 << 20
        let a = try item(f, size: size, catalogSize: catalogSize)
        f.origin.setFault("/a.mp4", .trickle(bytesPerSecond: 16 << 20))
        f.start()
        let start = try f.store.lastEventSeq()
        try f.perform(.download(item: "src/a.mp4", options: DownloadOptions()))
        // Time moves a second at a time, each time the download has made progress.
        var last: Int64 = 0
        let deadline = ContinuousClock.now + .seconds(60)
        while try f.item(a).state == .downloading || f.engine.scheduler.runningItems.contains(a.id) {
            #expect(ContinuousClock.now < deadline)
            guard ContinuousClock.now < deadline else { break }
            let bytes = try f.item(a).bytesPresent
            if bytes > last {
                last = bytes
                f.clock.advance(by: 1)
            }
            usleep(5000)
        }
        #expect(try f.item(a).state == .cached)
        let lines = try f.store.events(after: start, limit: 10_000).filter { $0.kind == .progress && $0.itemID == a.id }
        #expect(lines.count >= 3)
        #expect(lines.first?.message.hasPrefix("a.mp4 [a.mp4].mp4: ") == true)
        #expect(lines.allSatisfy { $0.message.contains("% (") && $0.message.contains("of 64.0 MiB") }, "\(lines.map(\.message))")
    }
}
