import Foundation
import OfflineEngine
import OfflineTestSupport

/// Feeds as origins serve them, and a throw-away library beside a live test origin.
enum SyncFixtures {
    static func podcastRSS(origin: TestOrigin, withLengths: Bool = true) -> String {
        func length(_ n: Int) -> String { withLengths ? " length=\"\(n)\"" : "" }
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">
            <channel>
              <title>Night Owls</title>
              <item>
                <title>Episode 1: Owls</title>
                <guid>owl-1</guid>
                <enclosure url="\(origin.url("/media/owl-1.mp3"))"\(length(10_000)) type="audio/mpeg"/>
                <category>Nature</category>
                <itunes:duration>12:05</itunes:duration>
                <pubDate>Wed, 01 May 2024 12:30:00 +0000</pubDate>
              </item>
              <item>
                <title>Episode 2: Bats</title>
                <guid>owl-2</guid>
                <enclosure url="\(origin.url("/media/owl-2.mp3"))"\(length(20_000)) type="audio/mpeg"/>
                <category>Nature</category>
                <category>Night</category>
              </item>
            </channel>
            </rss>
            """
    }

    static func atom(origin: TestOrigin) -> String {
        """
        <?xml version="1.0" encoding="utf-8"?>
        <feed xmlns="http://www.w3.org/2005/Atom">
          <title>Lectures</title>
          <id>urn:lectures</id>
          <entry>
            <title>Intro to Rivers</title>
            <id>urn:lecture:rivers</id>
            <updated>2024-06-01T10:00:00Z</updated>
            <link rel="enclosure" href="\(origin.url("/media/rivers.mp4"))" type="video/mp4" length="30000"/>
            <category term="science" label="Science"/>
          </entry>
        </feed>
        """
    }

    static func catalogPage1(origin: TestOrigin) -> String {
        """
        {"offlinefs": 1,
         "source": {"title": "Acme Media"},
         "categories": [
           {"id": "news", "name": "News"},
           {"id": "local", "name": "Local", "parent": "news"},
           {"id": "downtown", "name": "Downtown", "parent": "local"},
           {"id": "family", "name": "Family"}],
         "items": [
           {"id": "ep-001", "title": "Launch Day", "type": "video", "url": "/media/ep-001.mp4",
            "size": 4000, "mimeType": "video/mp4", "categories": ["downtown", "family"]},
           {"id": "ep-002", "title": "Evening News", "type": "video", "url": "/media/ep-002.mp4",
            "size": 5000, "mimeType": "video/mp4", "categories": ["news"]}],
         "next": "/acme/page2.json"}
        """
    }

    static func catalogPage2(origin: TestOrigin) -> String {
        """
        {"offlinefs": 1,
         "categories": [{"id": "family", "name": "Family"}],
         "items": [
           {"id": "ep-003", "title": "Picnic", "type": "video", "url": "/media/ep-003.mp4",
            "size": 6000, "mimeType": "video/mp4", "categories": ["family"]}]}
        """
    }
}

/// A library in a fresh temporary folder, removed when the test ends.
final class TemporaryLibrary {
    let folder: URL
    let library: Library

    init(settings: SyncSettings = SyncSettings()) throws {
        folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("offlinefs-test-\(UUID().uuidString)")
        library = try Library(folder: folder, syncSettings: settings)
    }

    deinit {
        try? FileManager.default.removeItem(at: folder)
    }
}
