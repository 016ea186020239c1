import Foundation
import OfflineStore
import OfflineTestSupport
import Testing

/// Programs that scan a library (`file`, thumbnailers, indexers) fetch what they read, not
/// whole files: no first window, no read-ahead, no streaming past their reads.
extension RealMounts {
@Suite(.serialized,
       .enabled(if: FUSEAvailability.hasDevFuse, "no /dev/fuse"),
       .enabled(if: FUSEAvailability.hasFusermount, "no fusermount3 in PATH"))
struct ReaderClassMountTests {
    /// A library just synced: three 20 MB items, nothing cached. Paths are `sources/acme/<file>`.
    static func threeUncachedItems() throws -> (LibraryFixture, [Item]) {
        let fixture = try LibraryFixture()
        let source = try fixture.addSource("acme")
        let items = try fixture.merge(source, (1...3).map {
            ItemSpec(contentID: "v\($0)", title: "Video \($0)", size: 20_000_000, seed: UInt64($0))
        })
        return (fixture, items.values.sorted { $0.id < $1.id })
    }

    /// A program that reads the start of each item and stops (`head -c 4096`, a shell script
    /// peeking at files) keeps 128 KiB of each at most: read-ahead grows only for a reader
    /// that proves sequential.
    @Test func headOfEveryItemKeepsAtMost128KiBOfEach() throws {
        let (fixture, items) = try Self.threeUncachedItems()
        try withMount(fixture) { (mount: MountedLibrary) throws in
            for item in items {
                let run = try mount.run(["sh", "-c", "head -c 4096 \"$0\" | wc -c", fixture.path("sources/acme/\(item.fileName ?? "")")])
                #expect(run.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "4096", "\(run.stderr)")
            }
        }
        for item in items {
            let kept = try fixture.current(item).bytesPresent
            #expect(kept <= 128 << 10, "\(item.contentID): \(kept) bytes kept")
        }
    }

    /// `file` (5.44) reads the first and the last 7 MiB of a 20 MB file.
    static let fileReads: Int64 = 14 << 20

    /// (Told to take `file` for an ordinary reader, `-o reader_class=file:other`, the same run
    /// keeps all 20 MB of each and makes it `cached`.)
    @Test func fileOnEveryItemKeepsAboutWhatItReadsAndCachesNothing() throws {
        let (fixture, items) = try Self.threeUncachedItems()
        try withMount(fixture) { (mount: MountedLibrary) throws in
            // When `file -b` (a scanner) looks at each
            for item in items {
                let run = try mount.run(["file", "-b", fixture.path("sources/acme/\(item.fileName ?? "")")], deadline: 60)
                #expect(run.status == 0, "\(run.stderr)")
            }
        }
        // Then (all flushed at the unmount) each kept about what file read, and none became cached
        for item in items {
            let current = try fixture.current(item)
            #expect(current.state != .cached)
            #expect(current.bytesPresent <= Self.fileReads + Self.fileReads / 4 + (1 << 20), "\(item.contentID)")
        }
    }
}
}
