import Foundation
import OfflineEngine
import OfflineFUSE
import OfflineStore
import OfflineTestSupport
import Testing

/// The tree in both setups: listings with owner, modes, sizes and times, inodes and how the
/// tree follows the store (DESIGN §2; HARDENING test 1). What a killed daemon leaves is in
/// MountLifecycleTests.
extension RealMounts {
@Suite(.serialized)
struct TreeListingTests {
    @Test(arguments: MountSetup.available)
    func everyFolderListsItsNamesWithOwnerModesSizesAndTimes(_ setup: MountSetup) throws {
        // Given
        let library = try StandardLibrary()
        let fixture = library.fixture
        let uid = getuid()
        try withLibraryMount(setup, fixture) { (mount: any LibraryMount) throws in
            /// The names `ls` shows: hidden ones left out.
            func ls(_ folder: String) throws -> Set<String> { Set(try mount.names(folder).filter { !$0.hasPrefix(".") }) }
            /// What `ls -ln --time-style=+%s` shows of an entry.
            func line(_ path: String) throws -> Listing.Line {
                let attributes = try mount.attributes(path)
                return Listing.Line(mode: String(attributes.mode, radix: 8), uid: attributes.uid, size: Int64(attributes.size),
                                    mtime: attributes.modificationTime.seconds)
            }
            let folder = String(UInt32(S_IFDIR) | 0o755, radix: 8), file = String(UInt32(S_IFREG) | 0o644, radix: 8)
            // When / Then: the fixed folders
            let root = try ls("")
            #expect(root == ["sources", "categories", "state", "recent", "unwatched"])
            for name in root { #expect(try line(name).mode == folder && line(name).uid == uid, "\(name)") }
            #expect(try ls("sources") == ["acme", "beta"])
            #expect(try ls("state") == ["queued", "downloading", "idle", "paused", "cached", "partially-cached", "failed"])

            // A source folder: media files and the side files beside them.
            #expect(try ls("sources/acme") == Set([StandardLibrary.launch, StandardLibrary.tiny, StandardLibrary.empty,
                                                   StandardLibrary.remote, StandardLibrary.queued] + StandardLibrary.launchSideFiles))
            // Cached or not, an item's time is its publish time (the download date is an xattr).
            #expect(try line("sources/acme/\(StandardLibrary.launch)") == Listing.Line(mode: file, uid: uid, size: 3_000_000,
                                                                                        mtime: 1_700_000_000))
            #expect(try line("sources/acme/\(StandardLibrary.tiny)").size == 1)
            #expect(try line("sources/acme/\(StandardLibrary.empty)").size == 0)
            #expect(try line("sources/acme/\(StandardLibrary.remote)") == Listing.Line(mode: file, uid: uid, size: 500_000,
                                                                                        mtime: 1_700_000_000))

            // Nested categories hold sub-folders and their own items.
            #expect(try ls("categories") == ["family", "news"])
            #expect(try ls("categories/news") == ["local", StandardLibrary.other])
            #expect(try ls("categories/news/local") == Set([StandardLibrary.launch] + StandardLibrary.launchSideFiles))
            #expect(try ls("categories/family") == Set([StandardLibrary.launch, StandardLibrary.remote] + StandardLibrary.launchSideFiles))

            // One folder per state; recent holds what was cached lately.
            let cached = Set([StandardLibrary.launch, StandardLibrary.tiny, StandardLibrary.empty, StandardLibrary.other]
                             + StandardLibrary.launchSideFiles)
            #expect(try ls("state/cached") == cached)
            #expect(try ls("state/paused") == [StandardLibrary.queued])
            #expect(try ls("state/queued").isEmpty)
            #expect(try ls("state/idle").isEmpty)
            #expect(try ls("recent") == cached)
        }
    }

    @Test(arguments: MountSetup.available)
    func anItemHasOneInodeEverywhereAndAcrossRestarts(_ setup: MountSetup) throws {
        let library = try StandardLibrary()
        let fixture = library.fixture
        let places = ["sources/acme", "categories/news/local", "categories/family", "state/cached", "recent"]
        var first: UInt64 = 0
        try withLibraryMount(setup, fixture) { (mount: any LibraryMount) throws in
            let inodes = try places.map { try mount.attributes("\($0)/\(StandardLibrary.launch)").inode }
            first = inodes[0]
            #expect(first != 0)
            #expect(Set(inodes).count == 1, "\(inodes)")
            // readdir's d_ino equals stat's, for every entry of a folder.
            for (name, listed) in try mount.inodes("sources/acme") {
                #expect(try listed == mount.attributes("sources/acme/\(name)").inode, "\(name)")
            }
            // Repeated listings are identical.
            #expect(try mount.inodes("state/cached") == mount.inodes("state/cached"))
        }
        try withLibraryMount(setup, fixture) { (mount: any LibraryMount) throws in
            #expect(try mount.attributes("recent/\(StandardLibrary.launch)").inode == first)
        }
    }

    @Test(arguments: MountSetup.available)
    func unknownNamesAreMissingAndTheTreeFollowsTheStore(_ setup: MountSetup) throws {
        let library = try StandardLibrary()
        let fixture = library.fixture
        try withLibraryMount(setup, fixture, options: ["refresh=100ms"]) { (mount: any LibraryMount) throws in
            #expect(throws: Errno.noSuchFileOrDirectory) { try mount.attributes("sources/acme/nothing.mp4") }
            #expect(throws: Errno.noSuchFileOrDirectory) { try mount.attributes("sources/nobody") }
            #expect(throws: Errno.noSuchFileOrDirectory) { try mount.attributes("state/deleted") }

            // When: the engine (here: the store) pauses the remote item and a sync adds one
            // (paused: the mount's scheduler leaves it there; a queued one it downloads at once)
            try fixture.store.setState(itemID: library.items["ep-004"]!.id, state: .paused)
            let acme = try #require(try fixture.store.source(named: "acme"))
            try fixture.merge(acme, [ItemSpec(contentID: "ep-001", title: "Launch Day", size: 3_000_000, seed: 11,
                                              categories: [["news", "local"], ["family"]], thumbnail: true, subtitles: ["en", "pt-BR"]),
                                     ItemSpec(contentID: "ep-002", title: "Tiny", size: 1, seed: 12),
                                     ItemSpec(contentID: "ep-003", title: "Empty", size: 0, seed: 13),
                                     ItemSpec(contentID: "ep-004", title: "Remote", size: 500_000, seed: 14, categories: [["family"]]),
                                     ItemSpec(contentID: "ep-005", title: "Queued", size: 100, seed: 15),
                                     ItemSpec(contentID: "ep-006", title: "Fresh", size: 10, seed: 17)])

            // Then: the mount shows both without a remount (the store is polled, the kernel told)
            #expect(eventually { try mount.names("state/paused").contains(StandardLibrary.remote) })
            #expect(eventually { try mount.names("sources/acme").contains("Fresh [ep-006].mp4") })
        }
    }
}
}
