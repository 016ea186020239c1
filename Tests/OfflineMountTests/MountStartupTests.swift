import Foundation
import OfflineFUSE
import OfflineStore
import OfflineTestSupport
import Testing

/// The mount is up before the library is checked and loaded (`MountStartup`): a damaged
/// library still ends the mount with status 1 and the reason, foreground or detached, and
/// leaves nothing mounted. (That a detached mount returns once the library is served is in
/// MountHelperTests.)
extension RealMounts {
@Suite(.serialized, .enabled(if: FUSEAvailability.hasDevFuse, "no /dev/fuse"),
       .enabled(if: FUSEAvailability.hasFusermount, "no fusermount3 in PATH"))
struct MountStartupTests {
    /// `-f`: the mount itself prints the reason; detached: its foreground process waited
    /// for the daemon's verdict and prints it on the terminal.
    @Test(arguments: [["-f"], []])
    func aDamagedLibraryEndsTheMountWithTheReason(foreground: [String]) throws {
        let library = try StandardLibrary()
        let fixture = library.fixture
        try damageItemTable(fixture)

        let mount = try ChildProcess.run([MountedLibrary.executable, "mount", fixture.mountpoint] + foreground
                                         + ["--library", fixture.libraryPath], deadline: 20)
        defer { if MountTable.isMounted(fixture.mountpoint) { _ = try? ChildProcess.run(["umount", "-l", fixture.mountpoint]) } }

        #expect(mount.status == 1, "\(mount.stderr)")
        #expect(mount.stderr.contains("is not a readable library database"), "\(mount.stderr)")
        #expect(MountTable.wait(for: fixture.mountpoint, mounted: false, deadline: 5))
    }

    /// Adds 400 items, then gives a page in the middle of the file (item rows) an invalid
    /// b-tree page type. The file still opens (header, schema and migration table are intact);
    /// only the integrity check finds the damage.
    private func damageItemTable(_ fixture: LibraryFixture) throws {
        let source = try fixture.addSource("bulk")
        let entries = (0..<400).map { index in
            CatalogEntry(contentID: "bulk-\(index)", title: "Bulk \(index)", type: .video,
                         mediaURL: "https://example.com/media/\(index).mp4", size: 1000, mimeType: "video/mp4",
                         duration: 60, publishedAt: nil, summary: "About \(index)", thumbnailURL: nil, licence: nil,
                         categoryPaths: [])
        }
        _ = try fixture.store.mergeCatalog(sourceID: source.id, title: nil, entries: entries, isComplete: true, now: Date())
        // A compact copy without a WAL (`VACUUM INTO`) replaces the library's file.
        let path = fixture.libraryPath + "/" + LibraryStore.databaseFileName
        let copy = fixture.directory + "/copy.sqlite"
        try fixture.store.backup(to: URL(fileURLWithPath: copy))
        try fixture.store.close()
        for stale in [path, path + "-wal", path + "-shm"] { try? FileManager.default.removeItem(atPath: stale) }
        try FileManager.default.moveItem(atPath: copy, toPath: path)
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        let pages = try handle.seekToEnd() / 4096
        try #require(pages > 20)
        try handle.seek(toOffset: pages / 2 * 4096)
        try handle.write(contentsOf: Data(repeating: 0xFF, count: 4096))
    }
}
}
