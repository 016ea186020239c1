import Foundation
import OfflineFeeds
import Testing

@Suite struct RSSParserTests {
    @Test func podcastFeedWithITunesAndMediaRSS() throws {
        // Given a podcast feed with enclosures, Media RSS groups, iTunes tags and a bad item
        let feed = try FeedFixtures.parse("podcast.rss")

        // Then the channel fields come from the channel, not from <image>
        #expect(feed.kind == .rss)
        #expect(feed.title == "Acme Tech & Talk")
        #expect(feed.description == "Weekly <b>talk</b> about tech.")
        #expect(feed.link == "https://acme.example/podcast")
        #expect(feed.imageURL == "https://acme.example/art.jpg")
        #expect(feed.nextPageURL == "https://acme.example/feeds/feed.rss?page=2")
        #expect(feed.lookupTemplate == nil)

        // And the item without media and the duplicate guid are skipped with warnings
        #expect(feed.items.map(\.contentID) == ["ep-001", "https://cdn.acme.example/ep2-high.mp4", "ep-003"])
        #expect(feed.warnings.contains { $0.contains("'ep-004'") && $0.contains("no usable media URL") })
        #expect(feed.warnings.contains { $0.contains("'ep-001'") && $0.contains("duplicate") })

        let first = feed.items[0]
        #expect(first.title == "Launch Day")
        #expect(first.type == .audio)
        #expect(first.mediaURL == "https://cdn.acme.example/ep1.mp3")
        #expect(first.size == 12_345_678)
        #expect(first.mimeType == "audio/mpeg")
        #expect(first.duration == 3723)
        #expect(first.publishedAt == Date(timeIntervalSince1970: 1_727_874_000))
        #expect(first.summary == "We launch.")
        #expect(first.thumbnailURL == "https://acme.example/ep1.jpg")
        #expect(first.categories == [["News"], ["Interviews"]])

        // The Media RSS item: the default content wins, thumbnail, subtitles, description
        let second = feed.items[1]
        #expect(second.title == "Behind the Scenes")
        #expect(second.type == .video)
        #expect(second.size == 5000)
        #expect(second.duration == 90.5)
        #expect(second.thumbnailURL == "https://cdn.acme.example/ep2.jpg")
        #expect(second.summary == "Media RSS description.")
        #expect(second.subtitles == [SubtitleTrack(language: "en", url: "https://acme.example/feeds/subs/ep2.en.vtt", format: .vtt)])
        // "Thu, 3 Oct 24 08:30 +0200": two-digit year, no seconds, numeric zone
        #expect(second.publishedAt == Date(timeIntervalSince1970: 1_727_937_000))

        // The HLS item with a relative URL and an MM:SS duration
        let third = feed.items[2]
        #expect(third.type == .hls)
        #expect(third.mediaURL == "https://acme.example/feeds/media/ep3.m3u8")
        #expect(third.duration == 2730)
        #expect(third.size == nil)

        // Feed categories are the item categories, without duplicates
        #expect(feed.categories == [["News"], ["Interviews"]])
    }

    /// Podcast feeds write `length="0"` or `"1"` for "not known": under 4 KiB no media file's
    /// size is taken (the sync then asks the origin), a real one is.
    @Test func anEnclosureLengthUnder4KiBIsNoSize() throws {
        let lengths = ["0", "1", " 4095 ", "4096", "abc", "-5", "12345678"]
        let items = lengths.enumerated().map { index, length in
            "<item><guid>e\(index)</guid><enclosure url=\"https://cdn.example/\(index).mp3\" length=\"\(length)\" type=\"audio/mpeg\"/></item>"
        }
        let rss = "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>T</title>\(items.joined())</channel></rss>"
        let feed = try FeedParser.parse(Data(rss.utf8), baseURL: FeedFixtures.baseURL)
        #expect(feed.items.map(\.size) == [nil, nil, nil, 4096, nil, nil, 12_345_678])
    }

    /// Feeds escape titles twice; the file name must not keep `&amp;`.
    @Test func htmlReferencesLeftInATitleAreDecoded() throws {
        let titles = ["Tom &amp;amp; Jerry", "&amp;lt;one&amp;gt; &amp;#233;t&amp;#xE9;", "AT&amp;T", "a &amp;bogus; b &amp;#0; c &amp;", "Plain"]
        let items = titles.enumerated().map { index, title in
            "<item><title>\(title)</title><guid>t\(index)</guid><enclosure url=\"https://cdn.example/\(index).mp3\" type=\"audio/mpeg\"/></item>"
        }
        let rss = "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>T</title>\(items.joined())</channel></rss>"
        let feed = try FeedParser.parse(Data(rss.utf8), baseURL: FeedFixtures.baseURL)
        #expect(feed.items.map(\.title) == ["Tom & Jerry", "<one> été", "AT&T", "a &bogus; b &#0; c &", "Plain"])
    }

    @Test func emptyChannelParsesToNoItems() throws {
        let feed = try FeedFixtures.parse("empty.rss")
        #expect(feed.title == "Nothing yet")
        #expect(feed.items.isEmpty)
        #expect(feed.warnings.isEmpty)
    }

    @Test func latin1DocumentIsDecoded() throws {
        let feed = try FeedFixtures.parse("latin1.rss")
        #expect(feed.title == "Café")
        #expect(feed.items.first?.title == "Été")
    }

    @Test func syntheticFeedParsesEveryItem() throws {
        let feed = try FeedParser.parse(FeedFixtures.syntheticRSS(items: 500), baseURL: FeedFixtures.baseURL)
        #expect(feed.items.count == 500)
        #expect(feed.items[499].contentID == "item-499")
        #expect(feed.items[499].title == "Episode 499 & friends")
        #expect(feed.items[499].size == 1_000_499)
        #expect(feed.categories.count == 10)
        #expect(feed.items.allSatisfy { $0.publishedAt != nil && $0.duration != nil })
    }

    @Test func rss1RDFItemsAreRead() throws {
        let rdf = """
            <?xml version="1.0"?>
            <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"
              xmlns:media="http://search.yahoo.com/mrss/">
              <channel><title>RDF feed</title></channel>
              <item><title>One</title><link>https://rdf.example/1</link>
                <media:content url="https://rdf.example/1.mp4" type="video/mp4"/></item>
            </rdf:RDF>
            """
        let feed = try FeedParser.parse(Data(rdf.utf8), baseURL: FeedFixtures.baseURL)
        #expect(feed.kind == .rss)
        #expect(feed.title == "RDF feed")
        #expect(feed.items.map(\.contentID) == ["https://rdf.example/1"])
        #expect(feed.items.first?.type == .video)
    }
}
