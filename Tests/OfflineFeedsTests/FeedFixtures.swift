import Foundation
import OfflineFeeds

/// Fixture files (Tests/OfflineFeedsTests/Fixtures) and generated feeds for tests and the
/// benchmark.
enum FeedFixtures {
    static let baseURL = URL(string: "https://acme.example/feeds/feed.rss")!

    struct Missing: Error, CustomStringConvertible {
        var name: String
        var description: String { "fixture \(name) not found in the test bundle" }
    }

    static func data(_ name: String) throws -> Data {
        guard let url = Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures") else {
            throw Missing(name: name)
        }
        return try Data(contentsOf: url)
    }

    /// Parses a fixture with default limits.
    static func parse(_ name: String, kind: FeedKind? = nil, limits: FeedLimits = FeedLimits()) throws -> ParsedFeed {
        try FeedParser.parse(data(name), kind: kind, baseURL: baseURL, limits: limits)
    }

    /// The error a fixture produces, or nil if it parses.
    static func error(_ name: String, limits: FeedLimits = FeedLimits()) throws -> FeedError? {
        let bytes = try data(name)
        do {
            _ = try FeedParser.parse(bytes, baseURL: baseURL, limits: limits)
            return nil
        } catch {
            return error
        }
    }

    /// A podcast-style RSS feed with `items` items (about 350 bytes each), every one with
    /// a guid, title, date, description, enclosure, iTunes duration and a category.
    static func syntheticRSS(items: Int) -> Data {
        var text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">
            <channel><title>Synthetic</title><link>https://bench.example/</link><description>Generated</description>

            """
        text.reserveCapacity(items * 380 + 512)
        let days = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
        for index in 0..<items {
            let day = index % 28 + 1
            text += """
                <item><guid isPermaLink="false">item-\(index)</guid><title>Episode \(index) &amp; friends</title>\
                <pubDate>\(days[index % 7]), \(day < 10 ? "0" : "")\(day) Mar 2024 10:\(index % 50 + 10):00 GMT</pubDate>\
                <description>Description of episode \(index).</description>\
                <enclosure url="https://cdn.bench.example/media/\(index).mp3" length="\(1_000_000 + index)" type="audio/mpeg"/>\
                <itunes:duration>00:\(index % 50 + 10):30</itunes:duration><category>Cat \(index % 10)</category></item>

                """
        }
        text += "</channel></rss>\n"
        return Data(text.utf8)
    }
}
