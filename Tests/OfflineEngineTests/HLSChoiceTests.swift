import Foundation
import OfflineEngine
import OfflineStore
import OfflineTestSupport
import Testing

/// HLS choices (docs/hls.md): variants listed before a download, a `quality=` kept for later
/// downloads, `audio=` languages fetched beside the default audio.
@Suite struct HLSChoiceTests {
    private static func hlsItem(_ f: EngineFixture, _ name: String, playlist: String) throws -> Item {
        try f.addEntry(CatalogEntry(contentID: name, title: name, type: .hls, mediaURL: f.origin.url("/hls/\(playlist)"),
                                    mimeType: "application/vnd.apple.mpegurl"))
    }

    private static func paths(_ f: EngineFixture, _ prefix: String) -> [String] {
        f.origin.requests.map(\.path).filter { $0.hasPrefix(prefix) }
    }

    @Test func variantsAreListedBeforeAnyDownloadThenKeptWithTheChoice() throws {
        let f = try EngineFixture()
        defer { f.close() }
        try HLSFixtureStreams.serve("ts", on: f.origin)
        let item = try Self.hlsItem(f, "show", playlist: "ts/master.m3u8")
        // Before any choice: asked of the origin (playlists only), nothing stored
        let listed = try f.library.hlsVariants(itemID: item.id)
        #expect(listed.map(\.bandwidth) == [145_200, 365_200])
        #expect(listed.map(\.resolution) == ["160x90", "320x180"])
        // 365,200 bit/s for the playlists' 6 seconds
        #expect(listed.last?.estimatedSize == 273_900)
        #expect(listed.allSatisfy { !$0.chosen })
        #expect(try f.store.hlsStream(itemID: item.id) == nil)
        #expect(Self.paths(f, "/hls/ts/").allSatisfy { $0.hasSuffix(".m3u8") }, "\(Self.paths(f, "/hls/ts/"))")
        // After a download at quality=low: stored with the choice, the low variant marked
        f.start()
        try f.perform(.download(item: "src/show", options: DownloadOptions(quality: .low)))
        try f.wait(item, .cached)
        let stored = try f.library.hlsVariants(itemID: item.id)
        #expect(stored.map(\.chosen) == [true, false])
        #expect(stored.map(\.estimatedSize) == listed.map(\.estimatedSize))
    }

    @Test func aLaterDownloadWithoutQualityKeepsTheChoiceAndFetchesNothingAgain() throws {
        let f = try EngineFixture()
        defer { f.close() }
        try HLSFixtureStreams.serve("ts", on: f.origin)
        let item = try Self.hlsItem(f, "show", playlist: "ts/master.m3u8")
        f.start()
        // Given the first 2 seconds at quality=low
        try f.perform(.download(item: "src/show", options: DownloadOptions(quality: .low, partialSeconds: 2)))
        try f.wait(item, .partiallyCached)
        // When the rest is asked without quality=
        f.origin.clearLog()
        try f.perform(.download(item: "src/show", options: DownloadOptions()))
        try f.wait(item, .cached)
        // Then the low variant's other 4 segments came, nothing of the high one, none twice
        let segments = Self.paths(f, "/hls/ts/").filter { $0.contains("segment") }
        #expect(Set(segments) == Set(HLSDownloadTests.lowSegments[2...].map { "/hls/\($0)" }), "\(segments)")
        #expect(segments.count == 4)
        #expect(try f.store.hlsStream(itemID: item.id)?.bandwidth == 145_200)
        // And a download of the cached item without quality= sends no request at all
        f.origin.clearLog()
        #expect(try f.perform(.download(item: "src/show", options: DownloadOptions())).hasSuffix("already cached"))
        f.engine.scheduler.tickNow()
        #expect(Self.paths(f, "/hls/").isEmpty, "\(Self.paths(f, "/hls/"))")
        // quality=auto goes back to the default: the high variant, fetched
        #expect(try f.perform(.download(item: "src/show", options: DownloadOptions(quality: .auto))).contains("queued"))
        try f.wait(item, .cached)
        #expect(try f.store.hlsStream(itemID: item.id)?.bandwidth == 365_200)
        #expect(Self.paths(f, "/hls/ts/high/segment").count == 6, "\(Self.paths(f, "/hls/"))")
    }

    /// The `alt` fixture's master with a second audio language (the same files, served again
    /// under `audio-fr/`).
    static let twoAudioMaster = """
        #EXTM3U
        #EXT-X-VERSION:3
        #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="English",DEFAULT=YES,LANGUAGE="en",URI="audio/index.m3u8"
        #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="Français",DEFAULT=NO,LANGUAGE="fr-FR",URI="audio-fr/index.m3u8"
        #EXT-X-STREAM-INF:BANDWIDTH=145200,RESOLUTION=160x90,CODECS="avc1.4d500b,mp4a.40.2",AUDIO="aud"
        video/index.m3u8

        """

    @Test func audioLanguagesAreFetchedBesideTheDefaultAudio() throws {
        let f = try EngineFixture()
        defer { f.close() }
        try HLSFixtureStreams.serve("alt", on: f.origin)
        let audio = HLSFixtureStreams.folder.appendingPathComponent("alt/audio")
        for name in try FileManager.default.contentsOfDirectory(atPath: audio.path) {
            f.origin.serve("/hls/alt/audio-fr/\(name)", .file(audio.appendingPathComponent(name).path))
        }
        f.origin.serve("/hls/alt/two-audio.m3u8", .text(Self.twoAudioMaster, contentType: "application/vnd.apple.mpegurl"))
        let item = try Self.hlsItem(f, "show", playlist: "alt/two-audio.m3u8")
        #expect(try f.library.hlsVariants(itemID: item.id).first?.audio == ["en", "fr-FR"])
        f.start()
        // By default only the default audio
        try f.perform(.download(item: "src/show", options: DownloadOptions()))
        try f.wait(item, .cached)
        #expect(Self.paths(f, "/hls/alt/audio-fr/").isEmpty)
        // audio=fr asks for French too: the cached item is fetched again with it
        #expect(try f.perform(.download(item: "src/show", options: DownloadOptions(audio: ["fr"]))).contains("queued"))
        try f.wait(item, .cached)
        #expect(Self.paths(f, "/hls/alt/audio-fr/segment").count == 5)
        let stream = try #require(f.engine.transfers.hls.stream(itemID: item.id))
        #expect(stream.tracks.filter { $0.kind == .audio }.count == 2)
        #expect(stream.part(named: "audio-2.m3u8") != nil && stream.part(named: "audio-2-0.ts") != nil)
        let master = stream.localPlaylist(folder: ".hls/1")
        let audioLines = master.split(separator: "\n").filter { $0.contains("TYPE=AUDIO") }
        #expect(audioLines.count == 2)
        #expect(audioLines.filter { $0.contains("DEFAULT=YES") }.count == 1, "\(master)")
        #expect(audioLines.contains { $0.contains("LANGUAGE=\"fr-FR\"") && $0.contains("URI=\".hls/1/audio-2.m3u8\"") })
        // Asked again without audio=: kept, nothing fetched
        f.origin.clearLog()
        #expect(try f.perform(.download(item: "src/show", options: DownloadOptions())).hasSuffix("already cached"))
        f.engine.scheduler.tickNow()
        #expect(Self.paths(f, "/hls/").isEmpty)
    }
}
