import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import OfflineEngine
import OfflineFUSE
import OfflineStore
import OfflineTestSupport
import Testing

/// Policy `sidecars nfo`, in both setups: each item has a well-formed `.nfo` with the
/// catalog's fields and its real size, and a podcast's artwork is `folder.jpg`.
extension RealMounts {
@Suite(.serialized)
struct SidecarMountTests {
    /// A library with policy `sidecars nfo` and two items, one with a title XML must escape.
    static func library() throws -> (fixture: LibraryFixture, tom: Item) {
        let fixture = try LibraryFixture()
        try fixture.store.setPolicy(name: "sidecars", value: "nfo")
        let source = try fixture.addSource("acme")
        let items = try fixture.merge(source, [
            ItemSpec(contentID: "m1", title: "Tom & Jerry <Live> \"quoted\"", size: 100_000, thumbnail: true, duration: 600),
            ItemSpec(contentID: "m2", title: "Plain", size: 50_000),
        ])
        return (fixture, try #require(items["m1"]))
    }

    @Test(arguments: MountSetup.available)
    func eachItemHasAWellFormedNFOWithItsRealSize(_ setup: MountSetup) throws {
        let (fixture, tom) = try Self.library()
        let nfo = "sources/acme/\(tom.fileName!.dropLast(4)).nfo"
        try withLibraryMount(setup, fixture) { (mount: any LibraryMount) throws in
            // Listed with a size, and reading gives exactly that many bytes
            let size = try mount.attributes(nfo).size
            let data = Data(try mount.contents(nfo))
            #expect(Int(size) == data.count && data.count > 0)
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
            // Every item has one
            #expect(try mount.names("sources/acme").contains("Plain [m2].nfo"))
            // Not writable, not removable
            #expect(mount.refusal(.openForWriting, nfo) == .permissionDenied)
            #expect(throws: Errno.self) { try mount.remove(nfo) }
            #expect(try mount.contents(nfo) == [UInt8](data))
        }
    }

    /// A sync lengthens a title while the mount's tree still holds the old `.nfo`'s size (its
    /// `refresh` has not come): a copy made then is still the whole new file, and the size
    /// shown catches up with it without waiting for the refresh.
    @Test(arguments: MountSetup.available)
    func anNFOReadBeforeTheTreeCatchesUpIsWhole(_ setup: MountSetup) throws {
        let (fixture, _) = try Self.library()
        let nfo = "sources/acme/Plain [m2].nfo"
        try withLibraryMount(setup, fixture, options: ["refresh=30m"]) { (mount: any LibraryMount) throws in
            let before = try mount.attributes(nfo).size
            try fixture.merge(try #require(try fixture.store.source(named: "acme")), [
                ItemSpec(contentID: "m1", title: "Tom & Jerry <Live> \"quoted\"", size: 100_000, thumbnail: true, duration: 600),
                ItemSpec(contentID: "m2", title: "Plain, now with a much longer title", size: 50_000),
            ])
            let copy = try mount.contents(nfo)
            let root = try #require(try XMLDocument(data: Data(copy)).rootElement())
            #expect(root.elements(forName: "title").first?.stringValue == "Plain, now with a much longer title")
            #expect(copy.count > Int(before))
            #expect(eventually { try mount.attributes(nfo).size == UInt64(copy.count) })
        }
    }

    @Test(arguments: MountSetup.available)
    func aPodcastsFeedArtworkIsFolderJPGAndItsEpisodesHaveEpisodeDetails(_ setup: MountSetup) throws {
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
        try withLibraryMount(setup, fixture) { (mount: any LibraryMount) throws in
            let folderJPG = "sources/owls/folder.jpg"
            #expect(try Int(mount.attributes(folderJPG).size) == art.count)
            // Dated by the sync that found the artwork, not by this mount's start: a backup
            // after a remount does not copy it again
            let found = try #require(try fixture.store.source(named: "owls")?.imageChangedAt)
            #expect(try mount.attributes(folderJPG).modificationTime.seconds == Int(found.timeIntervalSince1970.rounded(.down)))
            #expect(try mount.contents(folderJPG) == [UInt8](art))
            #expect(throws: Errno.self) { try mount.remove(folderJPG) }
            let nfo = Data(try mount.contents("sources/owls/Owls & Bats [owl-1].nfo"))
            let root = try #require(try XMLDocument(data: nfo).rootElement())
            #expect(root.name == "episodedetails")
            #expect(root.elements(forName: "showtitle").first?.stringValue == "Night Owls")
            #expect(root.elements(forName: "aired").first?.stringValue == "2023-11-14")
        }
    }
}

/// rsync copies an `.nfo` whole: a program's copy through the kernel, which reads as many
/// bytes as `stat` says.
@Suite(.serialized,
       .enabled(if: FUSEAvailability.hasDevFuse, "no /dev/fuse"),
       .enabled(if: FUSEAvailability.hasFusermount, "no fusermount3 in PATH"))
struct SidecarCopyTests {
    @Test func rsyncCopiesEachNFOWhole() throws {
        let (fixture, tom) = try SidecarMountTests.library()
        let stem = String(tom.fileName!.dropLast(4))
        let backup = fixture.directory + "/backup"
        try withMount(fixture) { (mount: MountedLibrary) throws in
            let data = try #require(FileManager.default.contents(atPath: fixture.path("sources/acme/\(stem).nfo")))
            #expect(!data.isEmpty)
            let copy = try mount.run(["rsync", "-a", fixture.path("sources") + "/", backup + "/"], deadline: 60)
            #expect(copy.status == 0, "\(copy.stderr)")
            #expect(FileManager.default.contents(atPath: backup + "/acme/\(stem).nfo") == data)
            #expect(FileManager.default.fileExists(atPath: backup + "/acme/Plain [m2].nfo"))
        }
    }

    /// A feed fixes a title at the same length: the next backup copies the `.nfo` (its time
    /// moved), and no media file (theirs did not).
    @Test func aSecondRsyncCopiesAnNFOWhoseTitleChangedAtTheSameLength() throws {
        let (fixture, _) = try SidecarMountTests.library()
        let backup = fixture.directory + "/backup"
        let nfo = "sources/acme/Plain [m2].nfo"
        try withMount(fixture, options: ["refresh=100ms"]) { (mount: MountedLibrary) throws in
            let first = try mount.run(["rsync", "-a", fixture.path("sources") + "/", backup + "/"], deadline: 60)
            #expect(first.status == 0, "\(first.stderr)")
            // When the feed's next sync says "Plane" for "Plain"
            try fixture.merge(try #require(try fixture.store.source(named: "acme")), [
                ItemSpec(contentID: "m1", title: "Tom & Jerry <Live> \"quoted\"", size: 100_000, thumbnail: true, duration: 600),
                ItemSpec(contentID: "m2", title: "Plane", size: 50_000),
            ])
            // (once the mount's tree has it: `refresh`)
            let published = Date(timeIntervalSince1970: TimeInterval(BackupTests.published))
            #expect(eventually { try FileManager.default.attributesOfItem(atPath: fixture.path(nfo))[.modificationDate] as? Date != published })
            // Then the next backup copies its new `.nfo` and no media file
            let second = try mount.run(["rsync", "-a", "--itemize-changes", fixture.path("sources") + "/", backup + "/"], deadline: 60)
            #expect(second.status == 0, "\(second.stderr)")
            #expect(second.stdout.contains("Plain [m2].nfo"), "\(second.stdout)")
            #expect(!second.stdout.contains(".mp4"), "\(second.stdout)")
            let copied = String(decoding: FileManager.default.contents(atPath: backup + "/acme/Plain [m2].nfo") ?? Data(), as: UTF8.self)
            #expect(copied.contains("<title>Plane</title>"), "\(copied)")
        }
    }
}
}
