import Foundation
import OfflineFeeds
import Testing

/// HARDENING tests 7, 16 and 17: hostile feeds give a clear error or a safe result.
@Suite struct HostileFeedTests {
    @Test func billionLaughsIsRefusedQuickly() throws {
        let start = ContinuousClock.now
        let error = try FeedFixtures.error("billion-laughs.rss")
        #expect(error?.code == .forbiddenDoctype)
        #expect(error?.message.contains("internal subset") == true)
        #expect(ContinuousClock.now - start < .seconds(1))
    }

    @Test func externalEntitiesAreRefused() throws {
        #expect(try FeedFixtures.error("external-entity.rss")?.code == .forbiddenDoctype)
        #expect(try FeedFixtures.error("entity-outside-doctype.rss")?.code == .forbiddenDoctype)
    }

    @Test func undeclaredHTMLEntitiesAreReplaced() throws {
        let feed = try FeedFixtures.parse("html-entities.rss")
        #expect(feed.title == "Café\u{A0}Radio — Live")
        #expect(feed.description == "Tom & Jerry © 2024, AT&T rocks, \u{FFFD} entity, été, \u{FFFD}")
        let item = try #require(feed.items.first)
        #expect(item.title == "Fish\u{A0}&\u{A0}Chips")
        #expect(item.summary == "Literal &nbsp; stays in CDATA")
        #expect(item.mediaURL == "https://example.com/a.mp3?x=1&y=2")
        #expect(feed.warnings.contains { $0.contains("&bogus;") })
    }

    @Test func deepJSONIsRefused() throws {
        let error = try FeedFixtures.error("deep.json")
        #expect(error?.code == .tooDeep)
        // The limit is settable
        let relaxed = FeedLimits(maxJSONDepth: 200)
        #expect(try FeedFixtures.error("deep.json", limits: relaxed) == nil)
    }

    @Test func invalidUTF8IsReplacedNotFatal() throws {
        let json = try FeedFixtures.parse("invalid-utf8.json")
        #expect(json.title == "Bad \u{FFFD}\u{FFFD} bytes \u{FFFD}(")
        #expect(json.items.first?.title == "caf\u{FFFD}")
        #expect(json.warnings.contains { $0.contains("invalid UTF-8") })

        let rss = try FeedFixtures.parse("invalid-utf8.rss")
        #expect(rss.title == "Bad \u{FFFD} bytes \u{FFFD}\u{FFFD}\u{FFFD}")
        #expect(rss.items.first?.title == "caf\u{FFFD}   ctl")
        #expect(rss.warnings.contains { $0.contains("invalid UTF-8") })
    }

    @Test func hostileTitlesAreKeptAsDataAndBadItemsSkipped() throws {
        let limits = FeedLimits(maxStringBytes: 255)
        let feed = try FeedFixtures.parse("hostile-titles.json", limits: limits)
        let titles = Dictionary(uniqueKeysWithValues: feed.items.map { ($0.contentID, $0.title) })

        #expect(titles["slash"] == "AC/DC / live")
        #expect(titles[".."] == "..")
        #expect(titles["nul"] == "a\u{0}b")
        #expect(titles["ctl"] == "bell\u{7}\u{1B}[31mred\nline")
        // 300 bytes of "é" cut to 254 bytes, never in the middle of a character
        let long = try #require(titles["long"])
        #expect(long.utf8.count == 254)
        #expect(long == String(repeating: "é", count: 127))
        #expect(feed.warnings.contains { $0.contains("'long' title cut to 255 bytes") })

        // Unusable items are skipped, each with a reason
        #expect(feed.items.map(\.contentID) == ["slash", "..", "nul", "ctl", "long", "badsha"])
        for (id, reason) in [
            ("file", "scheme file is not allowed"), ("ftp", "scheme ftp is not allowed"), ("slash", "duplicate"),
            ("badlic", "licence kind"), ("rental-nothing", "rental licence needs"),
        ] {
            #expect(feed.warnings.contains { $0.contains("'\(id)'") && $0.contains(reason) }, "\(id)")
        }
        #expect(feed.warnings.contains { $0.contains("not an object") })
        #expect(feed.warnings.contains { $0.contains("no \"id\"") })

        // A bad optional field is dropped, not the item
        let badsha = try #require(feed.items.last)
        #expect(badsha.sha256 == nil)
        #expect(badsha.type == .video)
        #expect(feed.warnings.contains { $0.contains("sha256 dropped") })
        #expect(feed.warnings.contains { $0.contains("unknown type 'hologram'") })
    }

    @Test func forbiddenSchemesInRSS() throws {
        let feed = try FeedFixtures.parse("bad-schemes.rss")
        #expect(feed.items.map(\.contentID) == ["ok-1", "fallback-1"])
        #expect(feed.items[0].mediaURL == "https://example.com/ok.mp3")
        #expect(feed.items[0].thumbnailURL == nil)
        #expect(feed.items[1].mediaURL == "https://example.com/b.mp3")
        #expect(feed.warnings.contains { $0 == "item 'file-1' skipped: enclosure URL scheme file is not allowed" })
        #expect(feed.warnings.contains { $0 == "item 'ftp-1' skipped: enclosure URL scheme ftp is not allowed" })
        #expect(feed.warnings.contains { $0.contains("thumbnail dropped: URL scheme javascript") })
    }

    @Test func truncatedXMLIsMalformed() throws {
        let error = try #require(try FeedFixtures.error("truncated.rss"))
        #expect(error.code == .malformed)
        #expect(error.message.contains("line"))
    }

    @Test func htmlPageIsUnsupported() throws {
        let error = try #require(try FeedFixtures.error("html-page.html"))
        #expect(error.code == .unsupported)
        #expect(error.message.contains("HTML page"))
    }

    @Test func emptyDocumentIsMalformed() throws {
        for bytes in [Data(), Data("  \n ".utf8)] {
            #expect(throws: FeedError(.malformed, "The feed document is empty.")) {
                try FeedParser.parse(bytes, baseURL: FeedFixtures.baseURL)
            }
        }
    }

    @Test func oversizedDocumentIsRefusedBeforeParsing() throws {
        let limits = FeedLimits(maxDocumentBytes: 1000)
        let error = try #require(try FeedFixtures.error("podcast.rss", limits: limits))
        #expect(error.code == .tooLarge)
        #expect(error.message.contains("1000 bytes"))
    }

    @Test func tooManyItemsIsAnError() throws {
        let limits = FeedLimits(maxItems: 100)
        #expect(throws: FeedError.self) {
            try FeedParser.parse(FeedFixtures.syntheticRSS(items: 101), baseURL: FeedFixtures.baseURL, limits: limits)
        }
        let exactly = try FeedParser.parse(FeedFixtures.syntheticRSS(items: 100), baseURL: FeedFixtures.baseURL, limits: limits)
        #expect(exactly.items.count == 100)
        let json = #"{"offlinefs": 1, "items": ["# + Array(repeating: "{}", count: 101).joined(separator: ",") + "]}"
        do {
            _ = try FeedParser.parse(Data(json.utf8), baseURL: FeedFixtures.baseURL, limits: limits)
            Issue.record("expected tooManyItems")
        } catch {
            #expect(error.code == .tooManyItems)
        }
    }

    @Test func deadlineStopsTheParse() throws {
        let limits = FeedLimits(deadline: .zero)
        do {
            _ = try FeedParser.parse(FeedFixtures.syntheticRSS(items: 3000), baseURL: FeedFixtures.baseURL, limits: limits)
            Issue.record("expected a deadline error")
        } catch {
            #expect(error.code == .deadline)
        }
    }

    @Test func warningsAreCapped() throws {
        let items = (0..<500).map { #"{"id": "i\#($0)", "url": "ftp://example.com/\#($0)"}"# }
            + [#"{"id": "ok", "url": "https://example.com/ok.mp4"}"#]
        let json = #"{"offlinefs": 1, "items": ["# + items.joined(separator: ",") + "]}"
        let feed = try FeedParser.parse(Data(json.utf8), baseURL: FeedFixtures.baseURL, limits: FeedLimits(maxWarnings: 10))
        #expect(feed.items.map(\.contentID) == ["ok"])
        #expect(feed.warnings.count == 11)
        #expect(feed.warnings.last == "490 more warnings not shown")
    }

    @Test func utf16FeedIsTranscoded() throws {
        let text = #"<?xml version="1.0" encoding="UTF-16"?><rss version="2.0"><channel><title>Ünïcode</title></channel></rss>"#
        var bytes = Data([0xFF, 0xFE])
        for unit in text.utf16 { bytes.append(contentsOf: [UInt8(unit & 0xFF), UInt8(unit >> 8)]) }
        #expect(FeedParser.detectKind(bytes) == .rss)
        #expect(try FeedParser.parse(bytes, baseURL: FeedFixtures.baseURL).title == "Ünïcode")
    }

    @Test func deeplyNestedXMLIsTooDeep() throws {
        let depth = 20_000
        let xml = "<rss><channel>" + String(repeating: "<x>", count: depth) + String(repeating: "</x>", count: depth) + "</channel></rss>"
        do {
            _ = try FeedParser.parse(Data(xml.utf8), baseURL: FeedFixtures.baseURL)
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .tooDeep)
        }
    }

    @Test func hugeTextIsCutToTheLimit() throws {
        let title = String(repeating: "x", count: 5_000_000)
        let xml = "<rss><channel><title>\(title)</title></channel></rss>"
        let feed = try FeedParser.parse(Data(xml.utf8), baseURL: FeedFixtures.baseURL, limits: FeedLimits(maxStringBytes: 1000))
        #expect(feed.title?.utf8.count == 1000)
        #expect(feed.warnings.contains("feed title cut to 1000 bytes"))
    }

    @Test func undeclaredPrefixesAndTrailingJunkAreTolerated() throws {
        let undeclared = #"<rss><channel><item><guid>a</guid><media:content url="https://x.example/a.mp4" type="video/mp4"/>"#
            + #"<itunes:duration>5</itunes:duration></item></channel></rss>"#
        let feed = try FeedParser.parse(Data(undeclared.utf8), baseURL: FeedFixtures.baseURL)
        #expect(feed.items.map(\.mediaURL) == ["https://x.example/a.mp4"])
        #expect(feed.items.first?.duration == 5)
        #expect(feed.warnings.contains { $0.contains("does not declare") })

        let junk = #"<rss><channel><item><guid>a</guid><enclosure url="https://x.example/a.mp3"/></item></channel></rss><junk/>"#
        let tolerated = try FeedParser.parse(Data(junk.utf8), baseURL: FeedFixtures.baseURL)
        #expect(tolerated.items.count == 1)
        #expect(tolerated.warnings.contains { $0.contains("after the end") })
    }
}
