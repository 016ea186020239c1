import Foundation
import OfflineEngine
import OfflineStore
import OfflineTestSupport
import Testing

/// Thumbnails and subtitles get their sizes at sync, so the mount lists them with real sizes
/// before anything reads them (copiers copy exactly `st_size` bytes; mpv waits on 0-byte subtitles).
@Suite struct SideFileSizeSyncTests {
    @Test func aJSONCatalogsStatedSizesAreKeptWithoutAskingTheOrigin() throws {
        // Given a catalog that states its side files' sizes
        let origin = try TestOrigin()
        defer { origin.stop() }
        let feed = origin.serveFeed(path: "/acme.json", json: """
            {"offlinefs": 1, "items": [
              {"id": "a", "title": "A", "url": "/m/a.mp4", "size": 10, "thumbnail": "/m/a.jpg", "thumbnailSize": 4321,
               "subtitles": [{"language": "en", "url": "/m/a.en.vtt", "size": 987}, {"language": "fr", "url": "/m/a.fr.vtt", "size": 0}]}]}
            """)
        origin.serve("/m/a.fr.vtt", .bytes(Data(repeating: 65, count: 55)))
        let temp = try TemporaryLibrary()
        try temp.library.addSource(name: "acme", feedURL: feed)
        // When it syncs
        #expect(try temp.library.sync().allSatisfy(\.succeeded))
        // Then the stated sizes are kept, and only the track stated as 0 ("unknown") got a HEAD
        let item = try #require(try temp.library.store.item(source: "acme", contentID: "a"))
        #expect(item.thumbnailSize == 4321)
        #expect(item.subtitles.map(\.size) == [987, 55])
        #expect(origin.requests(for: "/m/a.jpg").isEmpty)
        #expect(origin.requests(for: "/m/a.en.vtt").isEmpty)
        #expect(origin.requests(for: "/m/a.fr.vtt").map(\.method) == ["HEAD"])
    }

    @Test func aSideFileWhoseHeadGivesNoSizeIsFetchedToCountIt() throws {
        // Given a catalog whose thumbnail's origin refuses HEAD (405) and sends no length
        let origin = try TestOrigin()
        defer { origin.stop() }
        let feed = origin.serveFeed(path: "/acme.json", json: """
            {"offlinefs": 1, "items": [{"id": "a", "title": "A", "url": "/m/a.mp4", "size": 10, "thumbnail": "/m/a.jpg"}]}
            """)
        origin.serve("/m/a.jpg", .generated(size: 7_777, seed: 3, contentType: "image/jpeg"))
        origin.setFault("/m/a.jpg", .status(405), times: 1)
        origin.setFault("/m/a.jpg", .noContentLength)
        let temp = try TemporaryLibrary()
        try temp.library.addSource(name: "acme", feedURL: feed)
        // When it syncs
        #expect(try temp.library.sync().allSatisfy(\.succeeded))
        // Then the thumbnail was fetched once to count its bytes
        #expect(try temp.library.store.item(source: "acme", contentID: "a")?.thumbnailSize == 7_777)
        #expect(origin.requests(for: "/m/a.jpg").map(\.method) == ["HEAD", "GET"])
    }

    @Test func artworkEveryEpisodeSharesCostsOneHeadAndIsNotAskedAgain() throws {
        // Given a podcast whose three episodes share one image, with no size in the feed
        let origin = try TestOrigin()
        defer { origin.stop() }
        origin.serve("/art.jpg", .generated(size: 12_345, seed: 1, contentType: "image/jpeg"))
        let episodes = (1...3).map { n in
            """
            <item><title>E\(n)</title><guid>e\(n)</guid>
              <enclosure url="\(origin.url("/e\(n).mp3"))" length="100000" type="audio/mpeg"/>
              <itunes:image href="\(origin.url("/art.jpg"))"/></item>
            """
        }.joined()
        let feed = origin.serveFeed(path: "/owls.rss", xml: """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel><title>Owls</title>
            \(episodes)</channel></rss>
            """)
        let temp = try TemporaryLibrary()
        try temp.library.addSource(name: "owls", feedURL: feed)
        // When it syncs
        #expect(try temp.library.sync().allSatisfy(\.succeeded))
        // Then every episode's thumbnail has the image's size, from one HEAD
        for n in 1...3 {
            #expect(try temp.library.store.item(source: "owls", contentID: "e\(n)")?.thumbnailSize == 12_345)
        }
        #expect(origin.requests(for: "/art.jpg").map(\.method) == ["HEAD"])
        // And when the feed changes (a new episode) and syncs again, the known size is reused
        origin.clearLog()
        origin.changeContent("/owls.rss", .text("""
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel><title>Owls</title>
            \(episodes)<item><title>E4</title><guid>e4</guid>
              <enclosure url="\(origin.url("/e4.mp3"))" length="100000" type="audio/mpeg"/>
              <itunes:image href="\(origin.url("/art.jpg"))"/></item></channel></rss>
            """, contentType: "application/rss+xml"))
        #expect(try temp.library.sync().allSatisfy(\.succeeded))
        #expect(try temp.library.store.item(source: "owls", contentID: "e4")?.thumbnailSize == 12_345)
        #expect(origin.requests(for: "/art.jpg").isEmpty)
    }
}
