import Foundation
import OfflineEngine
import OfflineStore
import OfflineTestSupport
import Testing

/// HLS downloads that must not end `cached` (HARDENING 15): a missing segment, URLs outside
/// the URL policy, a live playlist; and a transfer cut mid-segment that resumes after a restart.
@Suite struct HLSDownloadFailureTests {
    @Test func missingSegmentFailsTheItem() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        // Given a stream whose fourth segment the origin no longer has
        try HLSFixtureStreams.serve("ts", on: fixture.origin)
        fixture.origin.remove("/hls/ts/high/segment-03.ts")
        let item = try fixture.addHLSItem("show", playlist: "ts/master.m3u8")
        // When it is downloaded
        let result = fixture.download(item)
        // Then it is never cached: an HTTP error that names the segment
        #expect(result.state == .failed || result.state == .idle, "\(result)")
        #expect(result.error == .httpError, "\(result)")
        #expect(result.message.contains("segment 3"), "\(result.message)")
        #expect(result.message.contains("404"), "\(result.message)")
        let stored = try #require(try fixture.store.item(id: item.id))
        #expect(stored.state == result.state)
        #expect(stored.error == .httpError)
        #expect(fixture.segmentProgress(item)?.first ?? 0 < 6)
    }

    @Test func segmentResetOnceIsRetriedWithinTheDownload() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        // Given a segment whose first transfer the origin resets (the others in flight stop)
        try HLSFixtureStreams.serve("ts", on: fixture.origin)
        fixture.origin.setFault("/hls/ts/high/segment-01.ts", .reset(afterBytes: 1000), times: 1)
        let item = try fixture.addHLSItem("show", playlist: "ts/master.m3u8")
        // When it is downloaded (three attempts)
        let result = fixture.download(item)
        // Then the next attempt completes it: the stopped transfers are not a failure of their own
        #expect(result.state == .cached, "\(result)")
        try HLSDownloadTests.expectSegmentsMatchOrigin(fixture, item, try #require(fixture.stream(item)))
    }

    @Test func missingSegmentEndsFailedThroughTheScheduler() throws {
        let f = try EngineFixture()
        defer { f.close() }
        try HLSFixtureStreams.serve("ts", on: f.origin)
        f.origin.setFault("/hls/ts/high/segment-02.ts", .status(404))
        let item = try f.addEntry(CatalogEntry(contentID: "show", title: "show", type: .hls,
                                               mediaURL: f.origin.url("/hls/ts/master.m3u8")))
        // Given no retries
        try f.store.setPolicy(name: "retry-limit", value: "0")
        f.start()
        // When it is downloaded
        try f.perform(.download(item: "src/show", options: DownloadOptions()))
        // Then it ends failed with http-error, never cached
        let failed = try f.wait(item, .failed)
        #expect(failed.error == .httpError)
        #expect(!(try f.transitions(item)).contains { $0.hasSuffix("→cached") })
    }

    @Test(arguments: [
        // (fixture, what the error names)
        ("hostile/file-segment.m3u8", "file"),
        ("hostile/ftp-variant.m3u8", "ftp"),
        ("hostile/javascript-key.m3u8", "javascript"),
        ("hostile/data-map.m3u8", "data"),
        ("hostile/file-rendition.m3u8", "file"),
    ])
    func nonHTTPURLsInPlaylistsFetchNothing(playlist: String, scheme: String) throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        // Given a playlist with a segment, variant, key or map URI that is not http(s)
        let body = try HLSFixtureStreams.data(playlist)
        fixture.origin.serve("/hls/\(playlist)", .bytes(body, contentType: "application/vnd.apple.mpegurl"))
        fixture.origin.serve("/hls/hostile/ok.ts", .generated(size: 1000, seed: 1))
        let item = try fixture.addHLSItem("hostile", playlist: playlist)
        // When it is downloaded
        let result = fixture.download(item)
        // Then it fails with a clear error, and nothing but the playlist was requested
        #expect(result.state == .failed, "\(result)")
        #expect(result.error == .downloadFailed, "\(result)")
        #expect(result.message.lowercased().contains(scheme), "\(result.message)")
        #expect(fixture.requestedPaths() == ["/hls/\(playlist)"], "\(fixture.requestedPaths())")
        #expect(try fixture.store.item(id: item.id)?.state == .failed)
    }

    @Test func livePlaylistIsRefused() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        // Given a media playlist without EXT-X-ENDLIST (a live stream)
        let live = try String(decoding: HLSFixtureStreams.data("ts/high/index.m3u8"), as: UTF8.self)
            .replacingOccurrences(of: "#EXT-X-ENDLIST\n", with: "")
            .replacingOccurrences(of: "#EXT-X-PLAYLIST-TYPE:VOD\n", with: "")
        fixture.origin.serve("/hls/live/index.m3u8", .text(live, contentType: "application/vnd.apple.mpegurl"))
        let item = try fixture.addHLSItem("live", playlist: "live/index.m3u8")
        // When it is downloaded
        let result = fixture.download(item)
        // Then it fails: live streams cannot be downloaded
        #expect(result.state == .failed, "\(result)")
        #expect(result.error == .downloadFailed)
        #expect(result.message.contains("live"), "\(result.message)")
        #expect(fixture.requestedPaths() == ["/hls/live/index.m3u8"])
    }

    @Test func publicFeedCannotSendThePlaylistFetchToLoopback() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        try HLSFixtureStreams.serve("ts", on: fixture.origin)
        // Given a source whose feed is on a public host, listing a playlist on 127.0.0.1
        let item = try Self.addPublicSourceItem(fixture, mediaURL: fixture.origin.url("/hls/ts/master.m3u8"))
        // When it is downloaded
        let result = fixture.download(item)
        // Then it fails (no retry can change the policy) and nothing reaches the origin
        #expect(result.state == .failed, "\(result)")
        #expect(result.error == .downloadFailed, "\(result)")
        #expect(result.message.contains("non-public"), "\(result.message)")
        #expect(fixture.origin.requests.isEmpty, "\(fixture.origin.requests)")
    }

    @Test func publicFeedCannotSendSegmentFetchesToLoopback() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        try HLSFixtureStreams.serve("ts", on: fixture.origin)
        // Given a public source's item whose chosen rendition (a public playlist) lists
        // segments on 127.0.0.1 — as a hostile CDN playlist would
        let item = try Self.addPublicSourceItem(fixture, mediaURL: "https://cdn.example/show/master.m3u8")
        let segments = (0..<3).map { fixture.origin.url(String(format: "/hls/ts/high/segment-%02d.ts", $0)) }
        let playlist = "#EXTM3U\n#EXT-X-TARGETDURATION:1\n"
            + segments.map { "#EXTINF:1,\n\($0)\n" }.joined() + "#EXT-X-ENDLIST\n"
        try fixture.store.putHLSStream(HLSStreamRecord(
            itemID: item.id, playlistURL: "https://cdn.example/show/index.m3u8", playlist: Data(playlist.utf8),
            quality: nil, estimatedSize: nil, chosenAt: Date()))
        // When it is downloaded
        let result = fixture.download(item)
        // Then the segments are refused before any connection, and the item fails
        #expect(result.state == .failed, "\(result)")
        #expect(result.error == .downloadFailed, "\(result)")
        #expect(result.message.contains("non-public"), "\(result.message)")
        #expect(fixture.origin.requests.isEmpty, "\(fixture.origin.requests)")
        #expect(try fixture.store.item(id: item.id)?.state != .cached)
    }

    /// Adds source `public` (feed on a public host) with one HLS item.
    static func addPublicSourceItem(_ fixture: TransferFixture, mediaURL: String) throws -> Item {
        let source = try fixture.store.addSource(name: "public", feedURL: "https://feeds.example/feed.json")
        let entry = CatalogEntry(contentID: "show", title: "show", type: .hls, mediaURL: mediaURL)
        _ = try fixture.store.mergeCatalog(sourceID: source.id, title: "Public", entries: [entry], isComplete: true, now: Date())
        return try #require(try fixture.store.item(source: "public", contentID: "show"))
    }

    @Test func transferCutMidSegmentResumesAfterRestart() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        try HLSFixtureStreams.serve("ts", on: fixture.origin)
        let item = try fixture.addHLSItem("show", playlist: "ts/master.m3u8")
        // Given a first download whose fifth segment the origin cuts after 10,000 bytes,
        // with the budget of one attempt
        fixture.origin.setFault("/hls/ts/high/segment-04.ts", .truncate(afterBytes: 10_000))
        let once = Downloader(store: fixture.store, fetcher: fixture.fetcher, hls: fixture.engine.hls, attemptsPerDownload: 1)
        let first = once.download(itemID: item.id)
        #expect(first.state == .idle, "\(first)")
        #expect(first.error == .networkError)
        let stream = try #require(fixture.stream(item))
        let states = try fixture.store.cacheStates(itemID: item.id)
        let complete = Set(stream.segmentParts.map { stream.parts[$0] }.filter { part in
            guard let state = states[part.resource], let total = state.totalSize else { return false }
            return state.ranges == [0..<total]
        }.compactMap { stream.resourceURLs[$0.resource]?.path })
        let cut = stream.parts[stream.segmentParts[4]]
        let claimedOfCut = states[cut.resource]?.ranges.first?.upperBound ?? 0

        // When the engine restarts and the origin serves everything again
        fixture.origin.clearFaults()
        fixture.origin.clearLog()
        try fixture.restartEngine()
        let second = fixture.download(item)
        // Then it completes with the origin's bytes, without fetching complete segments again,
        // and the cut segment resumes from its committed bytes
        #expect(second.state == .cached, "\(second)")
        try HLSDownloadTests.expectSegmentsMatchOrigin(fixture, item, try #require(fixture.stream(item)))
        let again = fixture.requestedPaths("/hls/ts/high/segment")
        #expect(Set(again).isDisjoint(with: complete), "complete: \(complete.sorted()), fetched again: \(again)")
        if claimedOfCut > 0 {
            let resumed = fixture.origin.requests(for: "/hls/ts/high/segment-04.ts")
            #expect(resumed.first?.header("range")?.hasPrefix("bytes=\(claimedOfCut)-") == true, "\(resumed)")
        }
    }
}
