import Foundation
import OfflineEngine
import OfflineStore
import OfflineTestSupport
import Testing

/// HLS downloads of the ffmpeg fixtures from an in-process origin (DESIGN §3): the variant
/// chosen, every segment's cache file equal to the origin's, exact sizes, partial downloads.
@Suite struct HLSDownloadTests {
    static let highSegments = HLSFixtureStreams.segments("ts/high", count: 6)
    static let lowSegments = HLSFixtureStreams.segments("ts/low", count: 6)

    /// Every segment part of the chosen rendition holds exactly its origin file.
    static func expectSegmentsMatchOrigin(_ fixture: TransferFixture, _ item: Item, _ stream: HLSStream,
                                          sourceLocation: SourceLocation = #_sourceLocation) throws {
        for index in stream.segmentParts {
            let part = stream.parts[index]
            let url = try #require(stream.resourceURLs[part.resource], sourceLocation: sourceLocation)
            let path = try #require(HLSFixtureStreams.fixturePath(of: url), sourceLocation: sourceLocation)
            #expect(try fixture.cachedBytes(item, part: part) == HLSFixtureStreams.data(path),
                    "\(part.name) (\(part.resource)) differs from \(path)", sourceLocation: sourceLocation)
        }
    }

    @Test func defaultDownloadTakesTheHighestVariant() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        // Given a master playlist with a 145 kbit/s and a 365 kbit/s variant of 6 × 1 s
        try HLSFixtureStreams.serve("ts", on: fixture.origin)
        let item = try fixture.addHLSItem("show", playlist: "ts/master.m3u8")
        // When it is downloaded with no quality asked
        let result = fixture.download(item)
        // Then the high variant is cached, with its exact size and the origin's bytes
        #expect(result.state == .cached, "\(result)")
        let stored = try #require(try fixture.store.item(id: item.id))
        #expect(stored.state == .cached)
        #expect(stored.size == (try HLSFixtureStreams.size(Self.highSegments)))
        #expect(stored.downloadedAt != nil)
        let stream = try #require(fixture.stream(item))
        #expect(stream.segmentCount == 6)
        try Self.expectSegmentsMatchOrigin(fixture, item, stream)
        #expect(stream.resourceURLs.values.allSatisfy { $0.path.hasPrefix("/hls/ts/high/") })
        // And the store names the variant
        let record = try #require(try fixture.store.hlsStream(itemID: item.id))
        #expect(record.bandwidth == 365_200)
        #expect(record.resolution == "320x180")
        #expect(record.playlistURL == fixture.origin.url("/hls/ts/high/index.m3u8"))
        #expect(fixture.segmentProgress(item) == [6, 6])
        // And nothing of the low variant was fetched
        #expect(fixture.requestedPaths("/hls/ts/low/").isEmpty, "\(fixture.requestedPaths())")
    }

    @Test(arguments: [
        ("low", 145_200), ("high", 365_200), ("200000", 145_200), ("365200", 365_200), ("1000", 145_200),
    ])
    func qualityPicksTheVariant(quality: String, bandwidth: Int) throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        try HLSFixtureStreams.serve("ts", on: fixture.origin)
        let item = try fixture.addHLSItem("show", playlist: "ts/master.m3u8")
        // When it is downloaded with quality=<quality>
        try fixture.request(item, quality: quality)
        let result = fixture.download(item)
        // Then that variant is cached, and only its segments were fetched
        #expect(result.state == .cached, "\(result)")
        #expect(try fixture.store.hlsStream(itemID: item.id)?.bandwidth == bandwidth)
        let chosen = bandwidth == 365_200 ? "high" : "low"
        let other = chosen == "high" ? "low" : "high"
        let segments = chosen == "high" ? Self.highSegments : Self.lowSegments
        #expect(try fixture.store.item(id: item.id)?.size == (try HLSFixtureStreams.size(segments)))
        #expect(fixture.requestedPaths("/hls/ts/\(other)/").isEmpty)
        try Self.expectSegmentsMatchOrigin(fixture, item, try #require(fixture.stream(item)))
    }

    @Test func fileSizeMaxBelowTheHighEstimateTakesTheLowVariant() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        try HLSFixtureStreams.serve("ts", on: fixture.origin)
        let item = try fixture.addHLSItem("show", playlist: "ts/master.m3u8")
        // Given file-size-max between the estimates (high: 365200 / 8 × 6 = 273,900 bytes,
        // low: 108,900)
        try fixture.store.setPolicy(name: "file-size-max", value: "200000")
        // When it is downloaded with no quality asked
        let result = fixture.download(item)
        // Then the low variant is the default choice
        #expect(result.state == .cached, "\(result)")
        #expect(try fixture.store.hlsStream(itemID: item.id)?.bandwidth == 145_200)
        #expect(try fixture.store.item(id: item.id)?.size == (try HLSFixtureStreams.size(Self.lowSegments)))
        #expect(fixture.requestedPaths("/hls/ts/high/segment").isEmpty, "\(fixture.requestedPaths())")
    }

    @Test func partialDownloadThenFullDownload() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        try HLSFixtureStreams.serve("ts", on: fixture.origin)
        let item = try fixture.addHLSItem("show", playlist: "ts/master.m3u8")
        // When the first 2 seconds are asked
        try fixture.request(item, partialSeconds: 2)
        let partial = fixture.download(item)
        // Then exactly the first two 1-second segments are present, and no other was fetched
        #expect(partial.state == .partiallyCached, "\(partial)")
        #expect(try fixture.store.item(id: item.id)?.state == .partiallyCached)
        #expect(fixture.segmentProgress(item) == [2, 6])
        let segmentRequests = fixture.requestedPaths("/hls/ts/high/segment")
        #expect(Set(segmentRequests) == ["/hls/ts/high/segment-00.ts", "/hls/ts/high/segment-01.ts"], "\(segmentRequests)")

        // When the whole stream is asked later
        fixture.origin.clearLog()
        try fixture.request(item)
        let full = fixture.download(item)
        // Then it is cached and the first two segments were not fetched again
        #expect(full.state == .cached, "\(full)")
        #expect(fixture.segmentProgress(item) == [6, 6])
        let later = fixture.requestedPaths("/hls/ts/high/segment")
        #expect(Set(later) == Set(Self.highSegments[2...].map { "/hls/\($0)" }), "\(later)")
        #expect(later.count == 4, "\(later)")
        #expect(try fixture.store.item(id: item.id)?.size == (try HLSFixtureStreams.size(Self.highSegments)))
        try Self.expectSegmentsMatchOrigin(fixture, item, try #require(fixture.stream(item)))
    }

    @Test func fragmentedMP4ComesWithItsInitSegment() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        // Given an fMP4 stream: master → index.m3u8 with EXT-X-MAP init.mp4 and 4 .m4s
        try HLSFixtureStreams.serve("fmp4", on: fixture.origin)
        let item = try fixture.addHLSItem("clip", playlist: "fmp4/master.m3u8")
        // When it is downloaded
        let result = fixture.download(item)
        // Then it is cached with the init segment, and its size counts init + fragments
        #expect(result.state == .cached, "\(result)")
        let stream = try #require(fixture.stream(item))
        #expect(stream.container == .fragmentedMP4)
        let initPart = try #require(stream.part(named: "init.mp4"))
        #expect(try fixture.cachedBytes(item, part: initPart) == HLSFixtureStreams.data("fmp4/init.mp4"))
        #expect(stream.part(named: "0.m4s") != nil)
        try Self.expectSegmentsMatchOrigin(fixture, item, stream)
        let segments = HLSFixtureStreams.segments("fmp4", count: 4, ext: "m4s")
        #expect(try fixture.store.item(id: item.id)?.size == (try HLSFixtureStreams.size(segments + ["fmp4/init.mp4"])))
        #expect(fixture.requestedPaths("/hls/fmp4/init.mp4").count == 1)
    }

    @Test func mediaPlaylistAsTheItemURL() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        // Given an item whose URL is a media playlist (no master)
        try HLSFixtureStreams.serve("ts", on: fixture.origin)
        let item = try fixture.addHLSItem("show", playlist: "ts/low/index.m3u8")
        let result = fixture.download(item)
        #expect(result.state == .cached, "\(result)")
        #expect(try fixture.store.item(id: item.id)?.size == (try HLSFixtureStreams.size(Self.lowSegments)))
        let record = try #require(try fixture.store.hlsStream(itemID: item.id))
        #expect(record.bandwidth == nil)
        try Self.expectSegmentsMatchOrigin(fixture, item, try #require(fixture.stream(item)))
    }
}
