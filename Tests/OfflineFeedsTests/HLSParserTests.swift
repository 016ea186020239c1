import Foundation
import OfflineFeeds
import Testing

/// The HLS parser on streams ffmpeg made (Tests/Fixtures/HLS/make-fixtures.sh), on the RFC 8216
/// examples, and the local playlist writer.
@Suite struct HLSParserTests {
    // MARK: - ffmpeg fixtures

    @Test func tsMasterListsBothVariants() throws {
        // Given ffmpeg's own master playlist for two variants
        let master = try HLSFixtures.master("ts/master.m3u8")

        // Then both variants come in file order with what ffmpeg measured
        #expect(master.renditions.isEmpty)
        #expect(master.variants.count == 2)
        let low = master.variants[0], high = master.variants[1]
        #expect(low.url == HLSFixtures.url("ts/low/index.m3u8"))
        #expect(low.bandwidth == 145_200)
        #expect(low.resolution == HLSResolution(width: 160, height: 90))
        #expect(low.codecs == "avc1.4d500b,mp4a.40.2")
        #expect(high.url == HLSFixtures.url("ts/high/index.m3u8"))
        #expect(high.bandwidth == 365_200)
        #expect(high.resolution == HLSResolution(width: 320, height: 180))
        #expect(high.codecs == "avc1.4d400c,mp4a.40.2")
        #expect(high.averageBandwidth == nil && high.frameRate == nil && high.audioGroup == nil)
    }

    /// Segment counts and durations as ffprobe reports them (6.000000 s for ts, 4.000000 s for
    /// fmp4 and aes), and every segment URL names a file that is there.
    @Test(arguments: [("ts/low/index.m3u8", 6, 6.0), ("ts/high/index.m3u8", 6, 6.0), ("fmp4/index.m3u8", 4, 4.0),
                      ("aes/index.m3u8", 4, 4.0)])
    func ffmpegMediaPlaylists(path: String, count: Int, seconds: Double) throws {
        let playlist = try HLSFixtures.media(path)

        #expect(playlist.segments.count == count)
        #expect(playlist.totalDuration == seconds)
        #expect(playlist.targetDuration == 1)
        #expect(playlist.mediaSequence == 0)
        #expect(playlist.playlistType == "VOD")
        #expect(playlist.hasEndList)
        #expect(playlist.segments.map(\.sequence) == (0..<Int64(count)).map { $0 })
        #expect(playlist.segments.map(\.startTime) == (0..<count).map { Double($0) })
        for segment in playlist.segments {
            #expect(segment.duration == 1)
            #expect(segment.byteRange == nil && !segment.discontinuity)
            let file = try #require(HLSFixtures.file(for: segment.url))
            #expect(FileManager.default.fileExists(atPath: file.path), "\(segment.url) has no fixture file")
        }
    }

    @Test func tsSegmentsAreMPEGTSInTheClear() throws {
        let playlist = try HLSFixtures.media("ts/low/index.m3u8")
        #expect(playlist.version == 3)
        for segment in playlist.segments {
            #expect(segment.key == nil && segment.map == nil)
            let bytes = try Data(contentsOf: try #require(HLSFixtures.file(for: segment.url)))
            // MPEG-TS: 188-byte packets, each starting with the sync byte 0x47.
            #expect(bytes.count % 188 == 0 && bytes.first == 0x47)
        }
    }

    @Test func fmp4HasItsInitSegment() throws {
        let master = try HLSFixtures.master("fmp4/master.m3u8")
        #expect(master.variants.map(\.url) == [HLSFixtures.url("fmp4/index.m3u8")])
        #expect(master.variants.first?.bandwidth == 145_200)

        let playlist = try HLSFixtures.media("fmp4/index.m3u8")
        #expect(playlist.version == 7)
        let map = HLSMap(url: HLSFixtures.url("fmp4/init.mp4"))
        #expect(playlist.segments.allSatisfy { $0.map == map })
        #expect(playlist.segments.first?.url == HLSFixtures.url("fmp4/segment-00.m4s"))
        // The init segment is a real MP4: an `ftyp` box first.
        let initBytes = try Data(contentsOf: try #require(HLSFixtures.file(for: map.url)))
        #expect(initBytes.dropFirst(4).prefix(4) == Data("ftyp".utf8))
    }

    @Test func aesPlaylistHasKeyAndIV() throws {
        let playlist = try HLSFixtures.media("aes/index.m3u8")

        let key = HLSKey(
            method: .aes128, url: HLSFixtures.url("aes/key.bin"),
            iv: [0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF])
        #expect(playlist.segments.allSatisfy { $0.key == key })
        // The explicit IV wins over the sequence number for every segment.
        #expect(key.iv(forSequence: 3) == key.iv)
        // The key URI resolves to the committed key file: bytes 00 01 … 0f.
        let keyBytes = try Data(contentsOf: try #require(HLSFixtures.file(for: key.url)))
        #expect([UInt8](keyBytes) == (0..<16).map { UInt8($0) })
        for segment in playlist.segments {
            let bytes = try Data(contentsOf: try #require(HLSFixtures.file(for: segment.url)))
            // AES-128-CBC: whole blocks, and no cleartext TS sync byte at the start.
            #expect(bytes.count % 16 == 0 && bytes.first != 0x47)
        }
    }

    // MARK: - RFC 8216 examples

    @Test func masterWithAudioGroupsAndSubtitles() throws {
        let master = try HLSFixtures.master("rfc/master-audio-groups.m3u8")

        #expect(master.renditions.count == 5)
        let english = master.renditions[0]
        #expect(english.kind == .audio && english.groupID == "aac" && english.name == "English")
        #expect(english.language == "en" && english.isDefault && english.autoselect)
        #expect(english.url == HLSFixtures.url("rfc/main/english-audio.m3u8"))
        #expect(master.renditions[1].isDefault == false && master.renditions[1].autoselect)
        #expect(master.renditions[2].autoselect == false)
        // A comma inside a quoted string is not a separator; an absolute path keeps the host.
        let french = master.renditions[3]
        #expect(french.kind == .subtitles && french.name == "Français, forcé")
        #expect(french.url == URL(string: "https://cdn.example/subs/fr.m3u8"))
        #expect(master.renditions[4].kind == .closedCaptions && master.renditions[4].url == nil)

        // The I-frame stream is not a variant.
        #expect(master.variants.count == 4)
        let low = master.variants[0]
        #expect(low.bandwidth == 1_280_000 && low.averageBandwidth == 1_000_000)
        #expect(low.resolution == HLSResolution(width: 640, height: 360))
        #expect(low.frameRate == 29.970)
        #expect(low.audioGroup == "aac" && low.subtitlesGroup == "subs")
        #expect(low.codecs == "avc1.4d401e,mp4a.40.2")
        #expect(master.variants[2].url == URL(string: "https://other.example/hi/video-only.m3u8"))
        #expect(master.variants[3].resolution == nil && master.variants[3].subtitlesGroup == nil)
    }

    @Test func byteRangesResolveTheirOffsets() throws {
        let playlist = try HLSFixtures.media("rfc/byte-range.m3u8")
        let main = HLSFixtures.url("rfc/main.mp4")

        #expect(playlist.segments.map(\.byteRange) == [
            HLSByteRange(offset: 720, length: 75_232),
            // No offset: right after the previous sub-range of main.mp4
            HLSByteRange(offset: 75_952, length: 82_112),
            HLSByteRange(offset: 158_064, length: 69_864),
            HLSByteRange(offset: 500_000, length: 1_000),
            nil,
        ])
        #expect(playlist.segments.prefix(3).allSatisfy { $0.url == main })
        #expect(playlist.segments.allSatisfy { $0.map == HLSMap(url: main, byteRange: HLSByteRange(offset: 0, length: 720)) })
        #expect(playlist.totalDuration == 40)
        #expect(playlist.segments.map(\.startTime) == [0, 10, 20, 30, 37.5])
    }

    @Test func byteRangeWithoutOffsetAfterAnotherURIIsAnError() throws {
        let text = """
            #EXTM3U
            #EXT-X-TARGETDURATION:4
            #EXTINF:4,
            #EXT-X-BYTERANGE:100@0
            a.mp4
            #EXTINF:4,
            #EXT-X-BYTERANGE:100
            b.mp4
            """
        let error = try #require(Self.error(text))
        #expect(error.message == "line 7: EXT-X-BYTERANGE has no offset and the previous segment is not a byte range of the same URI")
        #expect(error.line == 7)
    }

    @Test func discontinuitiesAndSequenceNumbers() throws {
        let playlist = try HLSFixtures.media("rfc/discontinuity.m3u8")

        #expect(playlist.mediaSequence == 2680)
        #expect(playlist.playlistType == "EVENT")
        #expect(!playlist.hasEndList)
        #expect(playlist.segments.map(\.sequence) == [2680, 2681, 2682, 2683])
        #expect(playlist.segments.map(\.discontinuity) == [false, false, true, true])
        #expect(playlist.segments[2].url == URL(string: "https://ads.example.net/ad-1.ts"))
        #expect(abs(playlist.totalDuration - 28.896) < 1e-9)
        #expect(playlist.segments[3].startTime == 7.975 + 7.941 + 5.005)
    }

    @Test func keyRotationAndMethodNone() throws {
        let playlist = try HLSFixtures.media("rfc/key-rotation.m3u8")
        let segments = playlist.segments

        #expect(segments.count == 7)
        #expect(segments.first?.sequence == 7794)
        let r52 = HLSKey(method: .aes128, url: URL(string: "https://priv.example.com/key.php?r=52")!)
        let r53 = HLSKey(method: .aes128, url: URL(string: "https://priv.example.com/key.php?r=53")!)
        let explicit = HLSKey(method: .aes128, url: HLSFixtures.url("rfc/keys/54.bin"), iv: (1...16).map { UInt8($0) })
        #expect(segments.map(\.key) == [r52, r52, r52, r53, nil, explicit, explicit])

        // Without an IV attribute the IV is the sequence number, big-endian in 16 bytes.
        #expect(r52.iv(forSequence: 7794) == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x1E, 0x72])
        #expect(r52.iv(forSequence: 0x0102_0304_0506_0708) == [0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8])
        #expect(explicit.iv(forSequence: 7799) == (1...16).map { UInt8($0) })
    }

    @Test func crlfBOMCommentsAndUnknownTagsAreTolerated() throws {
        let playlist = try HLSFixtures.media("hostile/crlf-bom.m3u8")

        #expect(playlist.version == 3)
        #expect(playlist.targetDuration == 6)
        #expect(playlist.segments.map(\.url.lastPathComponent) == ["seg-1.ts", "seg-2.ts", "seg-3.ts"])
        #expect(playlist.segments.map(\.duration) == [5.5, 6, 6])
        let key = try #require(playlist.segments.last?.key)
        #expect(key.url == URL(string: "https://cdn.example/hls/hostile/k?a=1,b=2"))
        #expect(key.iv == (0..<16).map { UInt8($0) })
    }

    @Test func emptyMediaPlaylistIsValid() throws {
        let playlist = try HLSParser.parse(Data("#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-ENDLIST\n".utf8), url: HLSFixtures.origin)
        #expect(playlist == .media(HLSMediaPlaylist(targetDuration: 4, hasEndList: true)))
    }

    // MARK: - Writer

    @Test func renderedPlaylistRoundTrips() throws {
        // Given a playlist with byte ranges, discontinuities, a key rotation, METHOD=NONE and a map
        let source = """
            #EXTM3U
            #EXT-X-TARGETDURATION:10
            #EXT-X-MEDIA-SEQUENCE:41
            #EXT-X-MAP:URI="init.mp4",BYTERANGE="500@0"
            #EXT-X-KEY:METHOD=AES-128,URI="k1"
            #EXTINF:9.009,
            #EXT-X-BYTERANGE:1000@500
            all.mp4
            #EXTINF:9.5,
            #EXT-X-BYTERANGE:1000
            all.mp4
            #EXT-X-DISCONTINUITY
            #EXT-X-KEY:METHOD=AES-128,URI="k2",IV=0xffeeddccbbaa99887766554433221100
            #EXTINF:0.00001,
            c.m4s
            #EXTINF:4,
            d.m4s
            #EXT-X-KEY:METHOD=NONE
            #EXTINF:3.25,
            e.m4s
            """
        let original = try Self.media(source)

        // When it is rendered with local names
        let text = original.rendered { resource in
            switch resource {
            case .segment(let segment): "seg-\(segment.sequence).m4s"
            case .map: "init.mp4"
            case .key(let key): "key-\(key.url.lastPathComponent)"
            }
        }

        // Then the text is a plain VOD playlist with local URIs and no byte ranges
        let lines = text.split(separator: "\n")
        #expect(lines.prefix(5) == ["#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-TARGETDURATION:10", "#EXT-X-MEDIA-SEQUENCE:41", "#EXT-X-PLAYLIST-TYPE:VOD"])
        #expect(lines.last == "#EXT-X-ENDLIST")
        #expect(!text.contains("BYTERANGE") && !text.contains("https:"))
        #expect(lines.filter { $0.hasPrefix("#EXT-X-MAP") } == [#"#EXT-X-MAP:URI="init.mp4""#])
        // k1 has no explicit IV: each segment needs its own KEY line; k2's is written once.
        #expect(lines.filter { $0.hasPrefix("#EXT-X-KEY") } == [
            #"#EXT-X-KEY:METHOD=AES-128,URI="key-k1",IV=0x00000000000000000000000000000029"#,
            #"#EXT-X-KEY:METHOD=AES-128,URI="key-k1",IV=0x0000000000000000000000000000002a"#,
            #"#EXT-X-KEY:METHOD=AES-128,URI="key-k2",IV=0xffeeddccbbaa99887766554433221100"#,
            "#EXT-X-KEY:METHOD=NONE",
        ])

        // And parsing it back keeps durations, sequences, discontinuities and every IV
        let local = URL(string: "https://local.invalid/hls/7/index.m3u8")!
        guard case .media(let parsed) = try HLSParser.parse(Data(text.utf8), url: local) else {
            Issue.record("the rendered playlist is not a media playlist")
            return
        }
        #expect(parsed.hasEndList && parsed.playlistType == "VOD")
        #expect(parsed.mediaSequence == 41)
        #expect(parsed.segments.map(\.duration) == original.segments.map(\.duration))
        #expect(parsed.segments.map(\.sequence) == original.segments.map(\.sequence))
        #expect(parsed.segments.map(\.startTime) == original.segments.map(\.startTime))
        #expect(parsed.segments.map(\.discontinuity) == original.segments.map(\.discontinuity))
        #expect(parsed.segments.allSatisfy { $0.byteRange == nil && $0.map?.byteRange == nil })
        #expect(parsed.segments.map { $0.key?.method } == original.segments.map { $0.key?.method })
        #expect(
            parsed.segments.map { $0.key?.iv(forSequence: $0.sequence) }
                == original.segments.map { $0.key?.iv(forSequence: $0.sequence) })
        #expect(parsed.segments.map(\.url.lastPathComponent) == (41...45).map { "seg-\($0).m4s" })
    }

    @Test func renderedFixturesUseVersion3WithoutMap() throws {
        let playlist = try HLSFixtures.media("aes/index.m3u8")
        let text = playlist.rendered { resource in
            if case .segment(let segment) = resource { return ".hls/9/\(segment.sequence).ts" }
            return ".hls/9/key"
        }
        #expect(text.hasPrefix("#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:1\n"))
        // One explicit IV for every segment: a single KEY line.
        #expect(text.components(separatedBy: "#EXT-X-KEY:").count == 2)
        #expect(text.contains(#"#EXT-X-KEY:METHOD=AES-128,URI=".hls/9/key",IV=0x00112233445566778899aabbccddeeff"#))
        #expect(text.contains("#EXTINF:1.0,\n.hls/9/3.ts\n#EXT-X-ENDLIST\n"))
    }

    // MARK: - Helpers

    static func media(_ text: String) throws -> HLSMediaPlaylist {
        guard case .media(let playlist) = try HLSParser.parse(Data(text.utf8), url: HLSFixtures.origin) else {
            throw HLSFixtures.NotThatKind(path: "inline playlist")
        }
        return playlist
    }

    static func error(_ text: String, limits: HLSLimits = HLSLimits()) -> HLSParseError? {
        do {
            _ = try HLSParser.parse(Data(text.utf8), url: HLSFixtures.origin, limits: limits)
            return nil
        } catch {
            return error
        }
    }
}
