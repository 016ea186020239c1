import Foundation
import OfflineTestSupport

/// The sample library `offlinefs demo` serves from a local origin: two sources (a JSON
/// catalog with nested categories and a rental, and a podcast RSS feed) with small media.
enum DemoCatalog {
    struct Media {
        var path: String
        var size: Int64
        var seed: UInt64
        var contentType: String
    }

    static let media: [Media] = [
        Media(path: "/acme/media/launch-day.mp4", size: 3_145_728, seed: 1, contentType: "video/mp4"),
        Media(path: "/acme/media/city-council.mp4", size: 2_097_152, seed: 2, contentType: "video/mp4"),
        Media(path: "/acme/media/picnic.mp4", size: 1_572_864, seed: 3, contentType: "video/mp4"),
        Media(path: "/acme/media/premiere.mp4", size: 4_194_304, seed: 4, contentType: "video/mp4"),
        Media(path: "/owls/media/owls-at-dusk.mp3", size: 1_048_576, seed: 5, contentType: "audio/mpeg"),
        Media(path: "/owls/media/bats.mp3", size: 786_432, seed: 6, contentType: "audio/mpeg"),
    ]

    static let acmeCatalog = """
        {"offlinefs": 1,
         "source": {"title": "Acme Media", "description": "Everything Acme publishes."},
         "categories": [
           {"id": "news", "name": "News"},
           {"id": "local", "name": "Local", "parent": "news"},
           {"id": "family", "name": "Family"},
           {"id": "films", "name": "Films"}],
         "items": [
           {"id": "ep-001", "title": "Launch Day", "type": "video", "url": "media/launch-day.mp4",
            "size": 3145728, "mimeType": "video/mp4", "duration": 95, "published": "2026-11-01T09:00:00Z",
            "description": "How it all started.", "categories": ["news", "family"]},
           {"id": "ep-002", "title": "City Council", "type": "video", "url": "media/city-council.mp4",
            "size": 2097152, "mimeType": "video/mp4", "duration": 64, "published": "2026-11-10T18:00:00Z",
            "categories": ["local"]},
           {"id": "ep-003", "title": "Picnic", "type": "video", "url": "media/picnic.mp4",
            "size": 1572864, "mimeType": "video/mp4", "duration": 48, "categories": ["family"]},
           {"id": "film-1", "title": "Premiere (48-hour rental)", "type": "video", "url": "media/premiere.mp4",
            "size": 4194304, "mimeType": "video/mp4", "duration": 128, "categories": ["films"],
            "licence": {"kind": "rental", "rentalDuration": 172800, "playDuration": 3600}}]}
        """

    static func owlsFeed(baseURL: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">
        <channel><title>Night Owls</title><description>A podcast about the night.</description>
          <item><title>Owls at Dusk</title><guid>owl-1</guid>
            <enclosure url="\(baseURL)/owls/media/owls-at-dusk.mp3" length="1048576" type="audio/mpeg"/>
            <itunes:duration>00:01:05</itunes:duration><category>Nature</category>
            <pubDate>Sun, 15 Nov 2026 20:00:00 +0000</pubDate></item>
          <item><title>Bats</title><guid>owl-2</guid>
            <enclosure url="\(baseURL)/owls/media/bats.mp3" length="786432" type="audio/mpeg"/>
            <itunes:duration>00:00:49</itunes:duration><category>Nature</category>
            <pubDate>Mon, 16 Nov 2026 20:00:00 +0000</pubDate></item>
        </channel></rss>
        """
    }

    /// Serves the whole sample on `origin`; returns (source name, feed URL) pairs.
    static func serve(on origin: TestOrigin) -> [(name: String, url: String)] {
        for item in media {
            origin.serve(item.path, .generated(size: item.size, seed: item.seed, contentType: item.contentType))
        }
        let acme = origin.serveFeed(path: "/acme/catalog.json", json: acmeCatalog)
        let owls = origin.serveFeed(path: "/owls/feed.rss", xml: owlsFeed(baseURL: origin.baseURL))
        return [("acme", acme), ("night-owls", owls)]
    }
}
