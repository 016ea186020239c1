import Foundation
import OfflineTestSupport

/// The sample library `offlinefs demo` serves from a local origin: two sources with real
/// (synthetic, tiny) media from `Demo/Media`:
/// - `acme`, a JSON catalog: four H.264/AAC videos with JPEG thumbnails, WebVTT subtitles on
///   one, categories nested three deep (News › Local › Weather), a rental that expires ten
///   minutes after it is acquired (five after the first playback), and an HLS stream in two
///   variants;
/// - `night-owls`, a podcast RSS feed: two MP3 episodes and a cover image.
enum DemoCatalog {
    /// The rental's terms, short enough to watch it expire.
    static let rentalSeconds = 600
    static let rentalPlaySeconds = 300

    /// The JSON catalog; `size` and `sha256` of each file are filled from the media on disk,
    /// so regenerating the media needs no edit here.
    static func acmeCatalog(_ file: (String) -> (size: Int64, sha256: String)) -> String {
        func facts(_ name: String) -> String {
            let f = file("acme/" + name)
            return f.sha256.isEmpty ? #""size": \#(f.size)"# : #""size": \#(f.size), "sha256": "\#(f.sha256)""#
        }
        return """
            {"offlinefs": 1,
             "source": {"title": "Acme Media", "description": "Everything Acme publishes.",
                        "image": "thumbs/launch-day.jpg"},
             "categories": [
               {"id": "news", "name": "News"},
               {"id": "local", "name": "Local", "parent": "news"},
               {"id": "weather", "name": "Weather", "parent": "local"},
               {"id": "family", "name": "Family"},
               {"id": "films", "name": "Films"}],
             "items": [
               {"id": "ep-001", "title": "Launch Day", "type": "video", "url": "launch-day.mp4",
                "mimeType": "video/mp4", \(facts("launch-day.mp4")), "duration": 6,
                "published": "2025-11-01T09:00:00Z", "description": "How it all started (test pattern, 440 Hz).",
                "thumbnail": "thumbs/launch-day.jpg",
                "subtitles": [{"language": "en", "url": "subs/launch-day.en.vtt", "format": "vtt"},
                              {"language": "fr", "url": "subs/launch-day.fr.vtt", "format": "vtt"}],
                "categories": ["news", "family"]},
               {"id": "ep-002", "title": "City Council", "type": "video", "url": "city-council.mp4",
                "mimeType": "video/mp4", \(facts("city-council.mp4")), "duration": 5,
                "published": "2025-11-10T18:00:00Z", "description": "Colour bars from the council chamber.",
                "thumbnail": "thumbs/city-council.jpg", "categories": ["local"]},
               {"id": "ep-003", "title": "Picnic", "type": "video", "url": "picnic.mp4",
                "mimeType": "video/mp4", \(facts("picnic.mp4")), "duration": 5,
                "published": "2025-11-12T12:00:00Z", "thumbnail": "thumbs/picnic.jpg", "categories": ["family"]},
               {"id": "film-1", "title": "Premiere (10-minute rental)", "type": "video", "url": "premiere.mp4",
                "mimeType": "video/mp4", \(facts("premiere.mp4")), "duration": 6,
                "published": "2025-11-14T20:00:00Z", "description": "A rental: it expires \(rentalSeconds / 60) minutes after it is downloaded, or \(rentalPlaySeconds / 60) after you start watching.",
                "thumbnail": "thumbs/premiere.jpg", "categories": ["films"],
                "licence": {"kind": "rental", "rentalDuration": \(rentalSeconds), "playDuration": \(rentalPlaySeconds)}},
               {"id": "radar-1", "title": "Weather Radar", "type": "hls", "url": "hls/master.m3u8",
                "mimeType": "application/vnd.apple.mpegurl", "duration": 10,
                "published": "2025-11-15T06:00:00Z", "description": "An HLS stream: 320x180 and 640x360, 2-second segments.",
                "thumbnail": "thumbs/city-council.jpg", "categories": ["weather"]}]}
            """
    }

    static func owlsFeed(baseURL: String, _ file: (String) -> (size: Int64, sha256: String)) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">
        <channel><title>Night Owls</title><description>A podcast about the night.</description>
          <itunes:image href="\(baseURL)/owls/cover.jpg"/>
          <item><title>Owls at Dusk</title><guid>owl-1</guid>
            <enclosure url="\(baseURL)/owls/owls-at-dusk.mp3" length="\(file("owls/owls-at-dusk.mp3").size)" type="audio/mpeg"/>
            <itunes:duration>00:00:08</itunes:duration><category>Nature</category>
            <pubDate>Sat, 15 Nov 2025 20:00:00 +0000</pubDate></item>
          <item><title>Bats</title><guid>owl-2</guid>
            <enclosure url="\(baseURL)/owls/bats.mp3" length="\(file("owls/bats.mp3").size)" type="audio/mpeg"/>
            <itunes:duration>00:00:06</itunes:duration><category>Nature</category>
            <pubDate>Sun, 16 Nov 2025 20:00:00 +0000</pubDate></item>
        </channel></rss>
        """
    }

    /// Serves every media file (at `/<path under Media>`) and both feeds on `origin`; returns
    /// (source name, feed URL) pairs.
    static func serve(_ media: DemoMedia, on origin: TestOrigin) throws -> [(name: String, url: String)] {
        var facts: [String: (size: Int64, sha256: String)] = [:]
        for file in try media.files() {
            let path = media.url(of: file.relativePath).path
            origin.serve("/" + file.relativePath, .file(path, contentType: DemoMedia.contentType(of: file.relativePath)))
            let digest = SHA256Hasher.hex(of: (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data())
            facts[file.relativePath] = (file.size, digest)
        }
        func file(_ relativePath: String) -> (size: Int64, sha256: String) {
            // A file missing from the media folder: size 0 makes sync ask the origin, which answers 404.
            facts[relativePath] ?? (0, "")
        }
        let acme = origin.serveFeed(path: "/acme/catalog.json", json: acmeCatalog(file))
        let owls = origin.serveFeed(path: "/owls/feed.rss", xml: owlsFeed(baseURL: origin.baseURL, file))
        return [("acme", acme), ("night-owls", owls)]
    }
}
