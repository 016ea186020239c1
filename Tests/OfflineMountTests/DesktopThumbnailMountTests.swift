import Foundation
import OfflineStore
import OfflineTestSupport
import OfflineThumbnails
import Testing

/// The desktop's thumbnails written by the mount (freedesktop.org thumbnail standard): after a
/// listing, each item with a catalog thumbnail has a valid PNG that file managers find by its
/// URI, and no media byte was fetched for it. Kernel-only: the URIs name paths under a real
/// mount point, and the cache folder comes from the daemon's environment (`XDG_CACHE_HOME`).
extension RealMounts {
@Suite(.serialized,
       .enabled(if: FUSEAvailability.hasDevFuse, "no /dev/fuse"),
       .enabled(if: FUSEAvailability.hasFusermount, "no fusermount3 in PATH"))
struct DesktopThumbnailMountTests {
    static let image = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/offlinefs/Demo/Media/acme/thumbs/launch-day.jpg").path

    @Test func aListingLeavesThumbnailsForFileManagersAndFetchesNoMedia() throws {
        let fixture = try LibraryFixture()
        let cache = fixture.directory + "/cache"
        let source = try fixture.addSource("acme")
        let items = try fixture.merge(source, [
            ItemSpec(contentID: "c1", title: "Rock (live) & [more] #1", size: 500_000, categories: [["music"]],
                     thumbnailFile: Self.image),
            ItemSpec(contentID: "c2", title: "Plain", size: 300_000),
            ItemSpec(contentID: "c3", title: "Lost picture", size: 200_000, thumbnail: true),
        ])
        let rock = try #require(items["c1"]), plain = try #require(items["c2"]), lost = try #require(items["c3"])
        let lostPicture = try #require(lost.thumbnailURL.flatMap(URL.init(string:))).path
        fixture.origin.setFault(lostPicture, .status(404))
        let paths = ["sources/acme/\(rock.fileName!)", "categories/music/\(rock.fileName!)"]
        func entry(_ size: String, _ relative: String) throws -> String {
            let uri = try #require(ThumbnailNaming.uri(ofPath: fixture.path(relative)))
            return cache + "/thumbnails/\(size)/" + ThumbnailNaming.fileName(forURI: uri)
        }
        // A thumbnailer's failure for the item without a thumbnail, from before
        let failFolder = cache + "/thumbnails/fail/gnome-thumbnail-factory"
        try FileManager.default.createDirectory(atPath: failFolder, withIntermediateDirectories: true)
        let failed = try entry("fail/gnome-thumbnail-factory", "sources/acme/\(plain.fileName!)")
        FileManager.default.createFile(atPath: failed, contents: Data("x".utf8))

        try withMount(fixture, prefix: ["env", "XDG_CACHE_HOME=\(cache)"]) { (mount: MountedLibrary) throws in
            // When a file manager lists the source's folder and the category's
            for folder in ["sources/acme", "categories/music"] {
                #expect(try mount.run(["ls", fixture.path(folder)]).status == 0)
            }
            // Then each path of the item has a normal and a large thumbnail
            for relative in paths {
                for (size, side) in [("normal", 128), ("large", 256)] {
                    let file = try entry(size, relative)
                    #expect(eventually { FileManager.default.fileExists(atPath: file) }, "\(size) for \(relative)")
                    let image = try ThumbnailImage.read(file)
                    #expect(max(image.width, image.height) <= side && image.width > 0)
                    #expect(image.option("tEXt::Thumb::URI") == ThumbnailNaming.uri(ofPath: fixture.path(relative)))
                    var info = stat()
                    #expect(stat(fixture.path(relative), &info) == 0)
                    #expect(image.option("tEXt::Thumb::MTime") == String(info.st_mtim.tv_sec))
                    var own = stat()
                    #expect(stat(file, &own) == 0 && own.st_mode & 0o777 == 0o600)
                }
            }
            // And the thumbnail's bytes are all that was fetched: no media byte
            #expect(try fixture.current(rock).bytesPresent == 0)
            // When the user clears the thumbnail cache, the next listing writes them again
            let large = try entry("large", paths[0])
            try FileManager.default.removeItem(atPath: large)
            #expect(try mount.run(["ls", fixture.path("sources/acme")]).status == 0)
            #expect(eventually { FileManager.default.fileExists(atPath: large) })
            // A picture the origin does not have was asked for by the listings before, once:
            // two more listings ask nothing (the queue is serial: a rewrite after them fences them)
            let asked = fixture.origin.requests(for: lostPicture).count
            #expect(asked >= 1)
            for _ in 0..<2 { #expect(try mount.run(["ls", fixture.path("sources/acme")]).status == 0) }
            try FileManager.default.removeItem(atPath: large)
            #expect(try mount.run(["ls", fixture.path("sources/acme")]).status == 0)
            #expect(eventually { FileManager.default.fileExists(atPath: large) })
            #expect(fixture.origin.requests(for: lostPicture).count == asked)
            // When the other item is downloaded, the thumbnailer's failure for it goes
            #expect(fixture.control("download sources/acme/\(plain.fileName!)\n") == nil)
            #expect(eventually(within: 20) { !FileManager.default.fileExists(atPath: failed) })
            // When the source is removed, its items' thumbnails go with it
            #expect(fixture.control("source remove acme\n") == nil)
            let normal = try entry("normal", paths[0])
            #expect(eventually(within: 20) { !FileManager.default.fileExists(atPath: normal) })
        }
    }
}
}
