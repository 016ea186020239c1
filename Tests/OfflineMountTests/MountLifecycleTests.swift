import OfflineFUSE
import Foundation
import OfflineEngine
import OfflineTestSupport
import OfflineStore
import Testing

/// The tree through a real mount (`offlinefs mount -f` as a child process): listings,
/// attributes and inodes (DESIGN §2; HARDENING tests 1, 5).
extension RealMounts {
@Suite(.serialized, .enabled(if: FUSEAvailability.hasDevFuse, "no /dev/fuse"),
       .enabled(if: FUSEAvailability.hasFusermount, "no fusermount3 in PATH"))
struct MountLifecycleTests {
    @Test func everyFolderListsItsNamesWithOwnerModesSizesAndTimes() throws {
        // Given
        let library = try StandardLibrary()
        let fixture = library.fixture
        let uid = getuid()
        try withMount(fixture) { (mount: MountedLibrary) throws in
            func ls(_ folder: String) throws -> Listing {
                let result = try mount.run(["ls", "-ln", "--time-style=+%s", fixture.path(folder)])
                #expect(result.status == 0, "ls \(folder): \(result.stderr)")
                return Listing(result.stdout)
            }
            // When / Then: the fixed folders
            let root = try ls("")
            #expect(root.names == ["sources", "categories", "state", "recent", "unwatched"])
            #expect(root.lines.values.allSatisfy { $0.mode == "drwxr-xr-x" && $0.uid == uid })
            #expect(try ls("sources").names == ["acme", "beta"])
            #expect(try ls("state").names == ["queued", "downloading", "idle", "paused", "cached", "partially-cached", "failed"])

            // A source folder: media files and the side files beside them.
            let acme = try ls("sources/acme")
            #expect(acme.names == Set([StandardLibrary.launch, StandardLibrary.tiny, StandardLibrary.empty, StandardLibrary.remote,
                                       StandardLibrary.queued] + StandardLibrary.launchSideFiles))
            // Cached or not, an item's time is its publish time (the download date is an xattr).
            let launch = try #require(acme.lines[StandardLibrary.launch])
            #expect(launch == Listing.Line(mode: "-rw-r--r--", uid: uid, size: 3_000_000,
                                           mtime: 1_700_000_000))
            #expect(acme.lines[StandardLibrary.tiny]?.size == 1)
            #expect(acme.lines[StandardLibrary.empty]?.size == 0)
            #expect(acme.lines[StandardLibrary.remote] == Listing.Line(mode: "-rw-r--r--", uid: uid, size: 500_000, mtime: 1_700_000_000))

            // Nested categories hold sub-folders and their own items.
            #expect(try ls("categories").names == ["family", "news"])
            #expect(try ls("categories/news").names == ["local", StandardLibrary.other])
            #expect(try ls("categories/news/local").names == Set([StandardLibrary.launch] + StandardLibrary.launchSideFiles))
            #expect(try ls("categories/family").names == Set([StandardLibrary.launch, StandardLibrary.remote] + StandardLibrary.launchSideFiles))

            // One folder per state; recent holds what was cached lately.
            let cached = Set([StandardLibrary.launch, StandardLibrary.tiny, StandardLibrary.empty, StandardLibrary.other]
                             + StandardLibrary.launchSideFiles)
            #expect(try ls("state/cached").names == cached)
            #expect(try ls("state/paused").names == [StandardLibrary.queued])
            #expect(try ls("state/queued").names.isEmpty)
            #expect(try ls("state/idle").names.isEmpty)
            #expect(try ls("recent").names == cached)
        }
    }

    @Test func anItemHasOneInodeEverywhereAndAcrossRestarts() throws {
        let library = try StandardLibrary()
        let fixture = library.fixture
        let places = ["sources/acme", "categories/news/local", "categories/family", "state/cached", "recent"]
        var first: UInt64 = 0
        try withMount(fixture) { (_: MountedLibrary) throws in
            let inodes = places.map { inode(fixture.path("\($0)/\(StandardLibrary.launch)")) }
            first = inodes[0]
            #expect(first != 0)
            #expect(Set(inodes).count == 1, "\(inodes)")
            // readdir's d_ino equals stat's, for every entry of a folder.
            for (name, listed) in try directoryInodes(fixture.path("sources/acme")) {
                #expect(listed == inode(fixture.path("sources/acme/\(name)")), "\(name)")
            }
            // Repeated listings are identical.
            #expect(try directoryInodes(fixture.path("state/cached")) == directoryInodes(fixture.path("state/cached")))
        }
        try withMount(fixture) { (_: MountedLibrary) throws in
            #expect(inode(fixture.path("recent/\(StandardLibrary.launch)")) == first)
        }
    }

    @Test func unknownNamesAreMissingAndTheTreeFollowsTheStore() throws {
        let library = try StandardLibrary()
        let fixture = library.fixture
        try withMount(fixture, options: ["refresh=100ms"]) { (_: MountedLibrary) throws in
            var info = stat()
            #expect(stat(fixture.path("sources/acme/nothing.mp4"), &info) == -1 && errno == ENOENT)
            #expect(stat(fixture.path("sources/nobody"), &info) == -1 && errno == ENOENT)
            #expect(stat(fixture.path("state/deleted"), &info) == -1 && errno == ENOENT)

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
            #expect(waitUntil { names(fixture.path("state/paused")).contains(StandardLibrary.remote) })
            #expect(waitUntil { names(fixture.path("sources/acme")).contains("Fresh [ep-006].mp4") })
        }
    }

    @Test func killedDaemonReleasesTheMountAndARestartServesTheSameLibrary() throws {
        let library = try StandardLibrary()
        let fixture = library.fixture
        let mount = try MountedLibrary(fixture)
        defer { mount.cleanUp() }
        let before = try directoryInodes(fixture.path("sources/acme"))

        // When: kill -9 (auto_unmount: libfuse's fusermount3 watchdog releases the mount)
        mount.daemon.kill(SIGKILL)
        #expect(mount.daemon.wait(deadline: 5))
        // Generous: under a fully loaded CI machine the fusermount3 watchdog has been seen to take >10 s.
        #expect(MountTable.wait(for: fixture.mountpoint, mounted: false, deadline: 30))

        // Then: a restart shows the same names and inodes, and cached bytes are served
        try withMount(fixture) { (_: MountedLibrary) throws in
            #expect(try directoryInodes(fixture.path("sources/acme")) == before)
            let data = FileManager.default.contents(atPath: fixture.path("sources/acme/\(StandardLibrary.launch)"))
            #expect(data == fixture.originBytes(library.items["ep-001"]!))
        }
        try fixture.reopen()
        #expect(try fixture.store.integrityCheck() == ["ok"])
    }

    @Test func unmountClearsADeadMount() throws {
        let library = try StandardLibrary()
        let fixture = library.fixture
        let mount = try MountedLibrary(fixture, options: ["noauto_unmount"])
        defer { mount.cleanUp() }
        mount.daemon.kill(SIGKILL)
        let ended = mount.daemon.wait(deadline: 5)
        #expect(ended, "the daemon outlived kill -9; its threads:\n\(StuckDaemon.threads(of: mount.daemon.pid))")
        // (Seen once in a full run, 2026-11-24: the stat below then waited forever on the
        // live connection. Aborting it leaves the same dead mount and lets the suite go on.)
        if !ended { StuckDaemon.abortConnection(of: fixture.mountpoint) }
        // A dead mount stays in the table: "Transport endpoint is not connected".
        #expect(MountTable.isMounted(fixture.mountpoint))
        var info = stat()
        #expect(stat(fixture.path("sources"), &info) == -1 && errno == ENOTCONN)

        let result = try ChildProcess.run([MountedLibrary.executable, "unmount", fixture.mountpoint])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!MountTable.isMounted(fixture.mountpoint))
    }
}
}

// MARK: - Helpers

func inode(_ path: String) -> UInt64 {
    var info = stat()
    return stat(path, &info) == 0 ? UInt64(info.st_ino) : 0
}

/// name → d_ino from readdir(3), `.` and `..` left out.
func directoryInodes(_ path: String) throws -> [String: UInt64] {
    guard let dir = opendir(path) else { throw Failure("opendir \(path): errno \(errno)") }
    defer { closedir(dir) }
    var result: [String: UInt64] = [:]
    while let entry = readdir(dir) {
        let name = withUnsafePointer(to: entry.pointee.d_name) {
            $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
        }
        if name != "." && name != ".." { result[name] = UInt64(entry.pointee.d_ino) }
    }
    return result
}

func names(_ path: String) -> Set<String> {
    Set((try? directoryInodes(path))?.keys.map { $0 } ?? [])
}

/// Polls `condition` every 20 ms for up to `seconds`: for changes that travel through the
/// store poll and a kernel notification, which have no event a test can wait on.
func waitUntil(seconds: Double = 10, _ condition: () throws -> Bool) -> Bool {
    let end = Date().addingTimeInterval(seconds)
    repeat {
        if (try? condition()) == true { return true }
        usleep(20_000)
    } while Date() < end
    return false
}

/// HARDENING test 5: a 100,000-item folder lists without error, from the in-memory tree.
extension RealMounts {
@Suite(.serialized, .enabled(if: FUSEAvailability.hasDevFuse, "no /dev/fuse"),
       .enabled(if: FUSEAvailability.hasFusermount, "no fusermount3 in PATH"))
struct LargeListingTests {
    @Test func aHundredThousandItemsListWithoutError() throws {
        let fixture = try LibraryFixture()
        let source = try fixture.addSource("many")
        let entries = (0..<100_000).map { index in
            CatalogEntry(contentID: "id-\(index)", title: "Episode \(index) with a reasonably long title", type: .video,
                         mediaURL: "http://127.0.0.1:1/\(index).mp4", size: Int64(index), mimeType: "video/mp4")
        }
        _ = try fixture.store.mergeCatalog(sourceID: source.id, title: nil, entries: entries, isComplete: true, now: Date())
        try withMount(fixture) { (mount: MountedLibrary) throws in
            let start = ContinuousClock.now
            let ls = try mount.run(["ls", "-l", fixture.path("sources/many")], deadline: 120)
            let elapsed = ContinuousClock.now - start
            #expect(ls.status == 0, "\(ls.stderr)")
            #expect(ls.stdout.split(separator: "\n").count == 100_001)  // "total" and one line per item
            print("ls -l of 100,000 items: \(elapsed)")
        }
    }
}
}
