import Foundation
import Testing

@testable import OfflineFeeds

/// Table tests of the small field parsers the feed grammars share.
@Suite struct FeedFieldParserTests {
    @Test(arguments: [
        ("Wed, 02 Oct 2002 13:00:00 GMT", 1_033_563_600.0),
        ("Wed, 02 Oct 2002 15:00:00 +0200", 1_033_563_600),
        ("Wed, 02 Oct 2002 08:00:00 EST", 1_033_563_600),
        ("Wed, 02 Oct 2002 09:00:00 EDT", 1_033_563_600),
        ("2 Oct 2002 13:00 Z", 1_033_563_600),
        ("02 oct 02 13:00:00 UT", 1_033_563_600),
        ("Wednesday, 02 October 2002 13:00:00 GMT", 1_033_563_600),
        ("  Wed, 02 Oct 2002 13:00:00  ", 1_033_563_600),
        ("Wed, 02 Oct 2002 13:00:00 XYZ", 1_033_563_600),
        ("Oct 02 2002 13:00:00 GMT", 1_033_563_600),
        ("Thu, 29 Feb 2024 23:59:59 -0000", 1_709_251_199),
        ("Sat, 01 Jan 1970 00:00:00 GMT", 0),
    ])
    func rfc822Dates(text: String, expected: Double) {
        #expect(RFC822Date.parse(text) == Date(timeIntervalSince1970: expected))
    }

    @Test(arguments: ["", "yesterday", "Wed, 32 Oct 2002 13:00:00 GMT", "Thu, 29 Feb 2023 10:00:00 GMT",
                      "Wed, 02 Foo 2002 13:00:00 GMT", "Wed, 02 Oct 2002 25:00:00 GMT", "Wed, 02 Oct 2002 13:", "02 Oct"])
    func invalidRFC822Dates(text: String) {
        #expect(RFC822Date.parse(text) == nil)
    }

    @Test(arguments: [
        ("2002-10-02T13:00:00Z", 1_033_563_600.0),
        ("2002-10-02T15:00:00+02:00", 1_033_563_600),
        ("2002-10-02T08:00:00-0500", 1_033_563_600),
        ("2002-10-02t13:00:00z", 1_033_563_600),
        ("2002-10-02 13:00Z", 1_033_563_600),
        ("2002-10-02T13:00:00.250Z", 1_033_563_600.25),
        ("2002-10-02T13:00:00", 1_033_563_600),
        ("2002-10-02", 1_033_516_800),
    ])
    func rfc3339Dates(text: String, expected: Double) {
        #expect(RFC3339Date.parse(text) == Date(timeIntervalSince1970: expected))
    }

    @Test(arguments: ["", "2002-13-01", "02-10-02", "2002-10-02T13", "2002-10-02T13:00:00Zjunk", "2002-02-30"])
    func invalidRFC3339Dates(text: String) {
        #expect(RFC3339Date.parse(text) == nil)
    }

    @Test(arguments: [
        ("42", 42.0 as Double?), ("90.5", 90.5), ("03:05", 185), ("1:02:03", 3723), (" 01:00:00 ", 3600),
        ("", nil), ("abc", nil), ("1:2:3:4", nil), ("-5", nil), ("1::2", nil), ("1.5:00", nil), ("99999999999999", nil),
    ])
    func durations(text: String, expected: Double?) {
        #expect(MediaDuration.parse(text) == expected)
    }

    @Test(arguments: [
        ("application/vnd.apple.mpegurl", "https://x/a", MediaType.hls),
        ("Application/X-MpegURL; charset=utf-8", "https://x/a", .hls),
        ("audio/mpegurl", "https://x/a", .hls),
        (nil, "https://x/live/master.M3U8?token=1", .hls),
        ("video/mp4", "https://x/a.mp4", .video),
        ("audio/mpeg", "https://x/a", .audio),
        ("application/pdf", "https://x/a.mp4", .file),
        ("application/octet-stream", "https://x/a.mkv", .video),
        (nil, "https://x/a.opus", .audio),
        (nil, "https://x/a", .file),
        (nil, "https://x/dir.mp4/", .file),
    ] as [(String?, String, MediaType)])
    func mediaTypes(mimeType: String?, url: String, expected: MediaType) {
        #expect(MediaTypeGuess.guess(mimeType: mimeType, url: url) == expected)
    }

    @Test func mediumHintWhenMIMETypeSaysNothing() {
        #expect(MediaTypeGuess.guess(mimeType: nil, url: "https://x/a", medium: "video") == .video)
        #expect(MediaTypeGuess.guess(mimeType: "audio/mpeg", url: "https://x/a", medium: "video") == .audio)
    }

    static let base = URL(string: "https://feeds.example/shows/feed.xml")!

    @Test(arguments: [
        ("https://cdn.example/a.mp4", FeedURL.Resolution.allowed("https://cdn.example/a.mp4")),
        ("a.mp4", .allowed("https://feeds.example/shows/a.mp4")),
        ("../b.mp4", .allowed("https://feeds.example/b.mp4")),
        ("//cdn.example/c.mp4", .allowed("https://cdn.example/c.mp4")),
        ("HTTP://CDN.Example/D.mp4", .allowed("http://cdn.example/D.mp4")),
        ("  https://cdn.example/with space.mp4 ", .allowed("https://cdn.example/with%20space.mp4")),
        ("file:///etc/passwd", .forbiddenScheme("file")),
        ("ftp://example.com/a.mp3", .forbiddenScheme("ftp")),
        ("javascript:alert(1)", .forbiddenScheme("javascript")),
        ("data:text/plain,hi", .forbiddenScheme("data")),
        ("https://", .invalid),
        ("", .invalid),
    ])
    func urlPolicy(raw: String, expected: FeedURL.Resolution) {
        #expect(FeedURL.resolve(raw, against: Self.base) == expected)
    }

    @Test func textIsTrimmedAndCutOnCharacterBoundaries() {
        var cut = false
        #expect(FeedText.clean("  \n hello \t", limit: 100, cut: &cut) == "hello")
        #expect(FeedText.clean(" \n ", limit: 100, cut: &cut) == nil)
        #expect(!cut)
        // "€" is 3 bytes: 4 bytes hold one of them, never a broken one
        #expect(FeedText.clean("€€€", limit: 4, cut: &cut) == "€")
        #expect(cut)
        #expect(FeedText.clean("👍🏽", limit: 5, cut: &cut) == "👍")
    }

    @Test func htmlEntityTableCoversLatin1AndPunctuation() {
        #expect(HTMLEntities.codePoint("nbsp") == 0xA0)
        #expect(HTMLEntities.codePoint("eacute") == 0xE9)
        #expect(HTMLEntities.codePoint("yuml") == 0xFF)
        #expect(HTMLEntities.codePoint("mdash") == 0x2014)
        #expect(HTMLEntities.codePoint("hellip") == 0x2026)
        #expect(HTMLEntities.codePoint("NBSP") == nil)
    }
}
