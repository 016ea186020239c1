import Foundation
import OfflineFUSE
import OfflineStore
import OfflineTestSupport
import Testing

/// A large library's listing order is sorted in a temporary file (`LibraryStore.forEachItemOutline`).
/// With the temporary folder full, the mount still lists every item: the sort is redone in memory.
extension RealMounts {
@Suite(.serialized, .enabled(if: FUSEAvailability.hasDevFuse, "no /dev/fuse"),
       .enabled(if: FUSEAvailability.hasFusermount, "no fusermount3 in PATH"),
       .enabled(if: getuid() == 0, "mounting a tmpfs needs root"))
struct TreeSortSpaceTests {
    @Test func aFullTemporaryFolderStillListsEveryItem() throws {
        // Given: more items than SQLite sorts in memory (2 MiB of rows), and a full tmpfs as
        // the mount's temporary folder.
        let fixture = try LibraryFixture()
        let source = try fixture.addSource("bulk")
        let count = 30_000
        let entries = (0..<count).map { index in
            CatalogEntry(contentID: "bulk-\(index)", title: "A long enough title for item number \(index)", type: .video,
                         mediaURL: "https://example.com/media/\(index).mp4", size: 1000, mimeType: "video/mp4",
                         duration: 60, publishedAt: nil, summary: nil, thumbnailURL: nil, licence: nil, categoryPaths: [])
        }
        _ = try fixture.store.mergeCatalog(sourceID: source.id, title: nil, entries: entries, isComplete: true, now: Date())
        let temporary = fixture.directory + "/tmp"
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: false)
        let tmpfs = try ChildProcess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", temporary])
        try #require(tmpfs.status == 0, "\(tmpfs.stderr)")
        defer { _ = try? ChildProcess.run(["umount", "-l", temporary]) }
        let fill = try ChildProcess.run(["env", "LC_ALL=C", "dd", "if=/dev/zero", "of=\(temporary)/fill", "bs=4k"])
        try #require(fill.stderr.contains("No space left"), "\(fill.stderr)")

        // When
        let mount = try MountedLibrary(fixture, prefix: ["env", "SQLITE_TMPDIR=\(temporary)"])
        defer { mount.cleanUp() }

        // Then
        let folder = fixture.mountpoint + "/sources/bulk"
        #expect(eventually(within: 30) { try FileManager.default.contentsOfDirectory(atPath: folder).count == count })
        try mount.unmount()
    }
}
}
