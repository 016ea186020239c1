import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
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
}
}
