import Foundation
import OfflineFeeds
import Testing

@Suite struct AtomParserTests {
    @Test func atomEntriesWithEnclosures() throws {
        let feed = try FeedFixtures.parse("feed.atom")

        #expect(feed.kind == .atom)
        #expect(feed.title == "Example Video Channel")
        #expect(feed.description == "Short films")
        #expect(feed.link == "https://video.example/")
        #expect(feed.imageURL == "https://video.example/logo.png")
        #expect(feed.nextPageURL == "https://video.example/atom.xml?page=2")

        // The entry without an enclosure is skipped with a warning
        #expect(feed.items.map(\.contentID) == ["tag:video.example,2024:sunrise", "tag:video.example,2024:sunset"])
        #expect(feed.warnings.contains { $0.contains("'tag:video.example,2024:text'") })

        let sunrise = feed.items[0]
        #expect(sunrise.title == "Sunrise")
        #expect(sunrise.mediaURL == "https://acme.example/files/sunrise.mp4")
        #expect(sunrise.type == .video)
        #expect(sunrise.size == 204_800)
        // <published> wins over <updated>; 06:15+02:00 is 04:15Z
        #expect(sunrise.publishedAt == Date(timeIntervalSince1970: 1_714_450_500))
        #expect(sunrise.categories == [["Nature"], ["timelapse"]])
        #expect(sunrise.summary == "Dawn over the hills.")
        #expect(sunrise.thumbnailURL == "https://video.example/sunrise.jpg")

        let sunset = feed.items[1]
        #expect(sunset.type == .hls)
        #expect(sunset.publishedAt == Date(timeIntervalSince1970: 1_714_595_400.5))
        #expect(sunset.summary == "Dusk.")
        #expect(feed.categories == [["Nature"], ["timelapse"]])
    }

    @Test func detectsEachKind() throws {
        #expect(FeedParser.detectKind(try FeedFixtures.data("podcast.rss")) == .rss)
        #expect(FeedParser.detectKind(try FeedFixtures.data("feed.atom")) == .atom)
        #expect(FeedParser.detectKind(try FeedFixtures.data("catalog-page1.json")) == .json)
        #expect(FeedParser.detectKind(try FeedFixtures.data("html-page.html")) == nil)
        #expect(FeedParser.detectKind(Data("\u{FEFF}  <!-- hi --><feed/>".utf8)) == .atom)
        #expect(FeedParser.detectKind(Data()) == nil)
    }

    @Test func explicitKindMismatchIsUnsupported() throws {
        #expect(throws: FeedError.self) { try FeedFixtures.parse("podcast.rss", kind: .atom) }
        let atom = try FeedFixtures.data("feed.atom")
        do {
            _ = try FeedParser.parse(atom, kind: .rss, baseURL: FeedFixtures.baseURL)
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .unsupported)
            #expect(error.message.contains("<feed>"))
        }
    }
}
