import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import OfflineEngine
import OfflineStore
import OfflineTestSupport
import Testing

/// Policy `sidecars nfo` through a real mount: each item has a well-formed `.nfo` with the
/// catalog's fields and its real size, which copies read whole.
extension RealMounts {
@Suite(.serialized,
       .enabled(if: FUSEAvailability.hasDevFuse, "no /dev/fuse"),
       .enabled(if: FUSEAvailability.hasFusermount, "no fusermount3 in PATH"))
struct SidecarMountTests {
    @Test func eachItemHasAWellFormedNFOWithItsRealSize() throws {
        let fixture = try LibraryFixture()
        try fixture.store.setPolicy(name: "sidecars", value: "nfo")
        let source = try fixture.addSource("acme")
        let items = try fixture.merge(source, [
            ItemSpec(contentID: "m1", title: "Tom & Jerry <Live> \"quoted\"", size: 100_000, thumbnail: true, duration: 600),
            ItemSpec(contentID: "m2", title: "Plain", size: 50_000),
        ])
        let tom = try #require(items["m1"])
        let stem = String(tom.fileName!.dropLast(4))
        let nfo = fixture.path("sources/acme/\(stem).nfo")
        let backup = fixture.directory + "/backup"
        try withMount(fixture) { (mount: MountedLibrary) throws in
            // Listed with a size, and reading gives exactly that many bytes
            var info = stat()
            #expect(stat(nfo, &info) == 0)
            let data = try #require(FileManager.default.contents(atPath: nfo))
            #expect(Int(info.st_size) == data.count && data.count > 0)
            // Well-formed, with the catalog's fields
            let document = try XMLDocument(data: data)
            let root = try #require(document.rootElement())
            #expect(root.name == "movie")
            func field(_ name: String) -> String? { root.elements(forName: name).first?.stringValue }
            #expect(field("title") == "Tom & Jerry <Live> \"quoted\"")
            #expect(field("runtime") == "10")
            #expect(field("premiered") == "2023-11-14")
            #expect(field("thumb") == tom.thumbnailURL)
            #expect(field("uniqueid") == "m1")
            // Every item has one, and rsync copies it whole
            #expect(FileManager.default.fileExists(atPath: fixture.path("sources/acme/Plain [m2].nfo")))
            let copy = try mount.run(["rsync", "-a", fixture.path("sources") + "/", backup + "/"], deadline: 60)
            #expect(copy.status == 0, "\(copy.stderr)")
            #expect(FileManager.default.contents(atPath: backup + "/acme/\(stem).nfo") == data)
            // Not writable, not removable
            #expect(unlink(nfo) != 0)
        }
    }

    @Test func aPodcastsFeedArtworkIsFolderJPGAndItsEpisodesHaveEpisodeDetails() throws {
        let fixture = try LibraryFixture()
        try fixture.store.setPolicy(name: "sidecars", value: "nfo")
        let origin = fixture.origin
        origin.serve("/art.jpg", Resource(.file(DesktopThumbnailMountTests.image), contentType: "image/jpeg"))
        origin.serve("/owl-1.mp3", .generated(size: 4096, seed: 1, contentType: "audio/mpeg"))
        let url = origin.serveFeed(path: "/owls.rss", xml: """
            <rss version="2.0"><channel><title>Night Owls</title>
            <image><url>\(origin.url("/art.jpg"))</url><title>Night Owls</title><link>http://x/</link></image>
            <item><title>Owls &amp; Bats</title><guid>owl-1</guid><pubDate>Tue, 14 Nov 2023 22:13:20 GMT</pubDate>
            <enclosure url="\(origin.url("/owl-1.mp3"))" length="4096" type="audio/mpeg"/></item>
            </channel></rss>
            """)
        try fixture.library.addSource(name: "owls", feedURL: url)
        _ = try fixture.library.sync(sourceName: "owls")
        let art = try #require(FileManager.default.contents(atPath: DesktopThumbnailMountTests.image))
        try withMount(fixture) { (mount: MountedLibrary) throws in
            let folderJPG = fixture.path("sources/owls/folder.jpg")
            var info = stat()
            #expect(stat(folderJPG, &info) == 0 && Int(info.st_size) == art.count)
            #expect(FileManager.default.contents(atPath: folderJPG) == art)
            #expect(unlink(folderJPG) != 0)
            let nfo = try #require(FileManager.default.contents(atPath: fixture.path("sources/owls/Owls & Bats [owl-1].nfo")))
            let root = try #require(try XMLDocument(data: nfo).rootElement())
            #expect(root.name == "episodedetails")
            #expect(root.elements(forName: "showtitle").first?.stringValue == "Night Owls")
            #expect(root.elements(forName: "aired").first?.stringValue == "2023-11-14")
        }
    }
}
}
