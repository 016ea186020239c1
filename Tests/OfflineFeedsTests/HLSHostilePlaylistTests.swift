import Foundation
import OfflineFeeds
import Testing

/// HARDENING 15–17 for HLS: hostile and malformed playlists give an error that names the
/// problem and its line, and never a partial result.
@Suite struct HLSHostilePlaylistTests {
    /// Hand-written fixtures in Tests/Fixtures/HLS/hostile: the file, the error's code, line
    /// and a part of its message.
    @Test(arguments: [
        ("file-segment.m3u8", HLSParseError.Code.forbiddenURL, 6 as Int?, "segment URI 'file:///etc/passwd' has scheme file"),
        ("ftp-variant.m3u8", .forbiddenURL, 5, "variant URI 'ftp://cdn.example/high.m3u8' has scheme ftp"),
        ("data-map.m3u8", .forbiddenURL, 3, "EXT-X-MAP URI 'data:video/mp4;base64,AAAAGGZ0eXBpc29t' has scheme data"),
        ("javascript-key.m3u8", .forbiddenURL, 3, "EXT-X-KEY URI 'JavaScript:alert(1)' has scheme javascript"),
        ("file-rendition.m3u8", .forbiddenURL, 2, "EXT-X-MEDIA URI 'file:///dev/zero' has scheme file"),
        ("control-char-uri.m3u8", .forbiddenURL, 4, #"segment URI 'seg\u{01}ment.ts' contains a control character"#),
        ("no-extm3u.m3u8", .malformed, 1, "starts with #EXTM3U"),
        ("bad-iv.m3u8", .malformed, 3, "EXT-X-KEY IV '0x0011223344556677' is not 0x and 32 hex digits"),
        ("aes-without-uri.m3u8", .malformed, 3, "EXT-X-KEY METHOD=AES-128 has no URI"),
        ("byterange-without-previous.m3u8", .malformed, 7, "EXT-X-BYTERANGE has no offset"),
        ("stream-inf-without-uri.m3u8", .malformed, 2, "EXT-X-STREAM-INF is not followed by a URI line"),
        ("missing-bandwidth.m3u8", .malformed, 2, "EXT-X-STREAM-INF has no BANDWIDTH attribute"),
        ("mixed-master-media.m3u8", .malformed, 4, "EXTINF in a playlist that is a master playlist (EXT-X-STREAM-INF on line 2)"),
        ("nan-duration.m3u8", .malformed, 5, "EXTINF duration 'nan' is not a number"),
        ("missing-targetduration.m3u8", .malformed, nil, "no EXT-X-TARGETDURATION"),
        ("invalid-utf8.m3u8", .malformed, 3, "not valid UTF-8"),
    ])
    func hostileFixture(name: String, code: HLSParseError.Code, line: Int?, message: String) throws {
        let error = try #require(Self.error(try HLSFixtures.data("hostile/\(name)"), name: name))
        #expect(error.code == code)
        #expect(error.line == line)
        #expect(error.message.contains(message), "\(error.message)")
        if let line { #expect(error.message.hasPrefix("line \(line): ")) }
    }

    /// One-line problems, each inside an otherwise valid media playlist; the bad line is line 4.
    @Test(arguments: [
        ("#EXTINF:abc,", "EXTINF duration 'abc' is not a number"),
        ("#EXTINF:inf,", "EXTINF duration 'inf' is not a number"),
        ("#EXTINF:1e3,", "EXTINF duration '1e3' is not a number"),
        ("#EXTINF:-1,", "EXTINF duration -1 is negative"),
        ("#EXTINF:86401,", "EXTINF duration 86401 is longer than a day"),
        ("#EXT-X-BYTERANGE:12@x", "EXT-X-BYTERANGE '12@x' is not <length>[@<offset>]"),
        ("#EXT-X-BYTERANGE:9223372036854775807@1", "EXT-X-BYTERANGE ends past 2^63 bytes"),
        ("#EXT-X-KEY:METHOD=SAMPLE-AES-CTR,URI=\"k\"", "EXT-X-KEY METHOD 'SAMPLE-AES-CTR' is not supported"),
        ("#EXT-X-KEY:URI=\"k\"", "EXT-X-KEY has no METHOD attribute"),
        ("#EXT-X-KEY:METHOD=AES-128,URI=\"k\",IV=0x0011223344556677889900aabbccddeeffgg", "is not 0x and 32 hex digits"),
        ("#EXT-X-KEY:METHOD=AES-128,URI=\"k\",IV=0x00112233445566778899aabbccddeefg", "is not 0x and 32 hex digits"),
        ("#EXT-X-KEY:METHOD=AES-128,URI=\"k", "EXT-X-KEY attribute URI has no closing quote"),
        ("#EXT-X-KEY:METHOD=AES-128,URI=\"a\",URI=\"b\"", "EXT-X-KEY has attribute URI twice"),
        ("#EXT-X-KEY:METHOD=AES-128,uri=\"k\"", "EXT-X-KEY has a malformed attribute 'uri'"),
        ("#EXT-X-MAP:BYTERANGE=\"10@0\"", "EXT-X-MAP has no URI attribute"),
        ("#EXT-X-MAP:URI=\"https://\"", "EXT-X-MAP URI 'https://' is not a valid http or https URL"),
        ("#EXT-X-MEDIA-SEQUENCE:-3", "EXT-X-MEDIA-SEQUENCE '-3' is not a whole number"),
        ("#EXT-X-PLAYLIST-TYPE:LIVE", "EXT-X-PLAYLIST-TYPE 'LIVE' is not VOD or EVENT"),
        ("#EXT-X-TARGETDURATION:ten", "EXT-X-TARGETDURATION 'ten' is not a number"),
        ("#EXT-X-VERSION:x", "EXT-X-VERSION 'x' is not a whole number"),
        ("#EXT-X-STREAM-INF:BANDWIDTH=1", "EXT-X-STREAM-INF in a playlist that is a media playlist (EXT-X-TARGETDURATION on line 2)"),
        ("#EXTINF:1,\n#EXTINF:2,", "EXTINF, but the EXTINF on line 4 has no URI line yet"),
    ])
    func badLine(line text: String, message: String) throws {
        let playlist = "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXT-X-MEDIA-SEQUENCE:0\n\(text)\n#EXTINF:1,\na.ts\n"
        let error = try #require(HLSParserTests.error(playlist), "\(text) parsed")
        #expect(error.message.contains(message), "\(error.message)")
        #expect(error.line == (text.contains("\n") ? 5 : 4), "\(error.message)")
    }

    @Test(arguments: [
        ("#EXT-X-STREAM-INF:BANDWIDTH=12k\nlow.m3u8", "EXT-X-STREAM-INF BANDWIDTH '12k' is not a whole number"),
        ("#EXT-X-STREAM-INF:BANDWIDTH=1,RESOLUTION=1920*1080\nlow.m3u8", "RESOLUTION '1920*1080' is not <width>x<height>"),
        ("#EXT-X-STREAM-INF:BANDWIDTH=1,FRAME-RATE=nan\nlow.m3u8", "EXT-X-STREAM-INF FRAME-RATE 'nan' is not a number"),
        ("#EXT-X-MEDIA:TYPE=MUSIC,GROUP-ID=\"a\",NAME=\"x\"", "EXT-X-MEDIA TYPE 'MUSIC' is not AUDIO"),
        ("#EXT-X-MEDIA:TYPE=AUDIO,NAME=\"x\"", "EXT-X-MEDIA has no GROUP-ID attribute"),
        ("#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"a\",NAME=\"x\",DEFAULT=maybe", "EXT-X-MEDIA DEFAULT is 'maybe', not YES or NO"),
        ("low.m3u8", "a URI line without an EXT-X-STREAM-INF before it"),
        ("#EXT-X-STREAM-INF:BANDWIDTH=1\n//evil.example/x.m3u8\n#EXT-X-STREAM-INF:BANDWIDTH=1\nhttp:///nohost", "not a valid http or https URL"),
    ])
    func badMasterLine(lines text: String, message: String) throws {
        let playlist = "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=100\nfirst.m3u8\n\(text)\n"
        let error = try #require(HLSParserTests.error(playlist), "\(text) parsed")
        #expect(error.message.contains(message), "\(error.message)")
    }

    @Test func uriBeforeAnyTagIsAnError() {
        #expect(HLSParserTests.error("#EXTM3U\nseg.ts\n")?.message == "line 2: a URI line before any EXTINF or EXT-X-STREAM-INF")
        #expect(HLSParserTests.error("#EXTM3U\n# only a comment\n")?.message.contains("it lists nothing") == true)
        #expect(HLSParserTests.error("")?.message == "line 1: an HLS playlist starts with #EXTM3U")
        #expect(HLSParserTests.error("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1")?.line == 2)
        #expect(HLSParserTests.error("#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,")?.message == "line 3: EXTINF is not followed by a segment URI line")
    }

    @Test func protocolRelativeURIKeepsTheSchemeAndUppercaseSchemesAreAllowed() throws {
        let playlist = try HLSParserTests.media(
            "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\n//mirror.example/a.ts\n#EXTINF:1,\nHTTPS://CDN.Example/B.ts\n")
        #expect(playlist.segments.map(\.url.absoluteString) == ["https://mirror.example/a.ts", "https://cdn.example/B.ts"])
    }

    // MARK: - Limits, with generated playlists rather than huge files

    @Test func tooManySegmentsStopsAtTheLimit() throws {
        let limits = HLSLimits(maxSegments: 10)
        #expect(HLSParserTests.error(Self.mediaPlaylist(segments: 10), limits: limits) == nil)
        let error = try #require(HLSParserTests.error(Self.mediaPlaylist(segments: 11), limits: limits))
        #expect(error.code == .tooLarge)
        #expect(error.message == "line 24: more than 10 segments, the limit")
    }

    @Test func defaultSegmentLimitHolds() throws {
        let error = try #require(HLSParserTests.error(Self.mediaPlaylist(segments: 100_001)))
        #expect(error.code == .tooLarge && error.message.contains("more than 100000 segments"))
    }

    @Test func tooManyVariantsAndRenditions() throws {
        var master = "#EXTM3U\n"
        for index in 0...100 { master += "#EXT-X-STREAM-INF:BANDWIDTH=\(index)\nv\(index).m3u8\n" }
        let variants = try #require(HLSParserTests.error(master))
        #expect(variants.code == .tooLarge && variants.message == "line 202: more than 100 variants (EXT-X-STREAM-INF), the limit")

        var renditions = "#EXTM3U\n"
        for index in 0..<3 { renditions += "#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"a\",NAME=\"\(index)\"\n" }
        renditions += "#EXT-X-STREAM-INF:BANDWIDTH=1,AUDIO=\"a\"\nv.m3u8\n"
        let error = try #require(HLSParserTests.error(renditions, limits: HLSLimits(maxRenditions: 2)))
        #expect(error.code == .tooLarge && error.message == "line 4: more than 2 renditions (EXT-X-MEDIA), the limit")
    }

    @Test func tooManyBytesIsRefusedBeforeParsing() throws {
        let limits = HLSLimits(maxBytes: 1_000)
        let error = try #require(HLSParserTests.error(Self.mediaPlaylist(segments: 100), limits: limits))
        #expect(error.code == .tooLarge && error.line == nil)
        #expect(error.message.contains("more than the limit of 1000"))

        let big = try #require(HLSParserTests.error("#EXTM3U\n" + String(repeating: "#\n", count: 2_100_000)))
        #expect(big.message.contains("more than the limit of 4194304"))
    }

    @Test func longLineIsRefused() throws {
        let line = "#EXTINF:1," + String(repeating: "x", count: 70_000)
        let error = try #require(HLSParserTests.error("#EXTM3U\n#EXT-X-TARGETDURATION:1\n\(line)\na.ts\n"))
        #expect(error.code == .tooLarge)
        #expect(error.message == "line 3: the line is 70010 bytes, more than the limit of 65536")
    }

    @Test func sequenceOverflowIsAnError() throws {
        let text = "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXT-X-MEDIA-SEQUENCE:9223372036854775807\n#EXTINF:1,\na.ts\n#EXTINF:1,\nb.ts\n"
        let error = try #require(HLSParserTests.error(text))
        #expect(error.message.hasPrefix("line 7: the segment's sequence number is past 2^63"))
        // 2^64 - 1 is a valid RFC decimal-integer, but not a sequence number the engine can store.
        let huge = HLSParserTests.error("#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXT-X-MEDIA-SEQUENCE:18446744073709551615\n")
        #expect(huge?.line == 3)
    }

    // MARK: - Helpers

    static func mediaPlaylist(segments: Int) -> String {
        var text = "#EXTM3U\n#EXT-X-TARGETDURATION:1\n"
        text.reserveCapacity(segments * 16 + 64)
        for index in 0..<segments { text += "#EXTINF:1,\n\(index).ts\n" }
        return text + "#EXT-X-ENDLIST\n"
    }

    static func error(_ data: Data, name: String) -> HLSParseError? {
        do {
            _ = try HLSParser.parse(data, url: HLSFixtures.url("hostile/\(name)"))
            return nil
        } catch {
            return error
        }
    }
}
