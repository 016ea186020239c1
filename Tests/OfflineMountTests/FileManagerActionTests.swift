import Foundation
import OfflineStore
import OfflineTestSupport
import Testing

/// What a file manager's menu runs on files selected in a mount (`offlinefs action`, from the
/// Dolphin service menu, the Nautilus scripts and the Thunar actions). Kernel-only: the command
/// finds the library from the selected files' paths under a real mount.
extension RealMounts {
@Suite(.serialized,
       .enabled(if: FUSEAvailability.hasDevFuse, "no /dev/fuse"),
       .enabled(if: FUSEAvailability.hasFusermount, "no fusermount3 in PATH"))
struct FileManagerActionTests {
    @Test func actionsOnSelectedFilesDownloadLockAndRemove() throws {
        let fixture = try LibraryFixture()
        let source = try fixture.addSource("acme")
        let items = try fixture.merge(source, [ItemSpec(contentID: "a", title: "A file (1)", size: 300_000),
                                               ItemSpec(contentID: "b", title: "B", size: 200_000, categories: [["news"]])])
        let a = try #require(items["a"]), b = try #require(items["b"])
        try withMount(fixture) { (mount: MountedLibrary) throws in
            let program = MountedLibrary.executable
            // Download two files selected in two folders
            let download = try mount.run([program, "action", "download", fixture.path("sources/acme/\(a.fileName!)"),
                                          fixture.path("categories/news/\(b.fileName!)")])
            #expect(download.status == 0, "\(download.stderr)")
            #expect(eventually(within: 20) { try fixture.current(a).state == .cached && fixture.current(b).state == .cached })
            // Lock one, remove the other's download (from unwatched/, where it is listed now)
            #expect(try mount.run([program, "action", "lock", fixture.path("sources/acme/\(a.fileName!)")]).status == 0)
            #expect(try fixture.current(a).locked)
            #expect(try mount.run([program, "action", "evict", fixture.path("unwatched/\(b.fileName!)")]).status == 0)
            #expect(eventually { try fixture.current(b).state == .discovered && fixture.current(b).bytesPresent == 0 })
            // A locked item's download cannot be removed: refused, with the reason in .events
            let refused = try mount.run([program, "action", "evict", fixture.path("sources/acme/\(a.fileName!)")])
            #expect(refused.status == 1 && refused.stderr.contains("evict refused: ")
                    && refused.stderr.contains("is locked; unlock it first"), "\(refused.stderr)")
            // Files reached through symlinks (a desktop link to a file, a folder linked into
            // the mount), as file managers pass them
            let links = fixture.directory + "/Desktop"
            try FileManager.default.createDirectory(atPath: links, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: links + "/news", withDestinationPath: fixture.path("categories/news"))
            try FileManager.default.createSymbolicLink(atPath: links + "/a.mp4", withDestinationPath: fixture.path("sources/acme/\(a.fileName!)"))
            let unlock = try mount.run([program, "action", "unlock", links + "/a.mp4"])
            #expect(unlock.status == 0, "\(unlock.stderr)")
            #expect(try !fixture.current(a).locked)
            let again = try mount.run([program, "action", "download", links + "/news/\(b.fileName!)"])
            #expect(again.status == 0, "\(again.stderr)")
        }
    }
}
}
