import Foundation
import OfflineEngine
import OfflineTestSupport
import OfflineStore
import Testing

/// Reads of cached items through `cmp` and `mmap`, a rental's play clock started by a player
/// program only, and an unprivileged user (HARDENING tests 3, 13). Kernel-only: page-cache
/// reads, programs told apart by name, and permissions. The same reads without `mmap`, refused
/// writes, eviction by `rm`, licences, hostile names and the origin offline run in both
/// setups in BothSetupsTests.
extension RealMounts {
@Suite(.serialized, .enabled(if: FUSEAvailability.hasDevFuse, "no /dev/fuse"),
       .enabled(if: FUSEAvailability.hasFusermount, "no fusermount3 in PATH"))
struct ReadAndRefusalTests {
    @Test func cachedItemsReadAsTheOriginsBytesWithCatPreadAndMmap() throws {
        let library = try StandardLibrary()
        let fixture = library.fixture
        try withMount(fixture) { (mount: MountedLibrary) throws in
            // cat/cmp of every cached item, 0 and 1 byte included, in every place it appears
            for (id, name, folder) in [("ep-001", StandardLibrary.launch, "sources/acme"), ("ep-001", StandardLibrary.launch, "recent"),
                                       ("ep-002", StandardLibrary.tiny, "sources/acme"), ("ep-003", StandardLibrary.empty, "state/cached"),
                                       ("b-1", StandardLibrary.other, "categories/news")] {
                let expected = fixture.originBytes(library.items[id]!)
                let copy = fixture.directory + "/expected-\(id)"
                try expected.write(to: URL(fileURLWithPath: copy))
                let cmp = try mount.run(["cmp", copy, fixture.path("\(folder)/\(name)")])
                #expect(cmp.status == 0, "\(folder)/\(name): \(cmp.stdout) \(cmp.stderr)")
            }

            // Seeded random pread and mmap reads against the origin's bytes (fsx style)
            let path = fixture.path("sources/acme/\(StandardLibrary.launch)")
            let expected = [UInt8](fixture.originBytes(library.items["ep-001"]!))
            try checkRandomReads(path: path, expected: expected, seed: 42, count: 300)
        }
    }

    /// `-o ro` (an fstab line's): reads, listings and attributes work; the kernel refuses every
    /// change, so nothing is queued or evicted.
    @Test func aReadOnlyMountReadsAndRefusesEveryChange() throws {
        let library = try StandardLibrary()
        let fixture = library.fixture
        try withMount(fixture, options: ["ro"]) { (mount: MountedLibrary) throws in
            let cached = fixture.path("sources/acme/\(StandardLibrary.launch)")
            let copy = fixture.directory + "/expected"
            try fixture.originBytes(library.items["ep-001"]!).write(to: URL(fileURLWithPath: copy))
            #expect(try mount.run(["cmp", copy, cached]).status == 0)
            #expect(PlaybackMountTests.xattr("user.offline.state", cached) == "cached")
            #expect(fixture.control("evict sources/acme/\(StandardLibrary.launch)\n") == EROFS)
            let marked = try mount.run(["setfattr", "-n", "user.offline.watched", "-v", "1", cached])
            #expect(marked.status != 0 && marked.stderr.contains("Read-only file system"), "\(marked.stderr)")
            #expect(unlink(cached) == -1 && errno == EROFS)
            #expect(try fixture.current(library.items["ep-001"]!).state == .cached)
        }
    }

    /// A rental's play clock starts with a player's reads only: backups, `file` and `cat`
    /// reading all of it start nothing (here `dd` is told to count as a player).
    @Test func onlyAPlayersReadsStartARentalsPlayClock() throws {
        let fixture = try LibraryFixture()
        let source = try fixture.addSource("rentals")
        let terms = LicenceTerms(kind: .rental, rentalDuration: 86_400, playDuration: 600)
        let item = try #require(try fixture.merge(source, [ItemSpec(contentID: "film", title: "Film", size: 3_000_000,
                                                                    seed: 5, licence: terms)])["film"])
        try fixture.cache(item)
        try fixture.store.putLicence(Licence(itemID: item.id, terms: terms, acquiredAt: Date(),
                                             expiresAt: Date().addingTimeInterval(86_400)))
        try withMount(fixture, options: ["reader_class=dd:player"]) { (mount: MountedLibrary) throws in
            let path = fixture.path("sources/rentals/Film [film].mp4")
            let copy = fixture.directory + "/copy"
            try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
            for command in [["rsync", "-a", path, copy + "/"], ["tar", "cf", copy + "/film.tar", path], ["file", "-b", path],
                            ["cp", path, copy + "/film.mp4"], ["cat", path]] {
                let run = try mount.run(command, deadline: 30)
                #expect(run.status == 0, "\(command[0]): \(run.stderr)")
            }
            #expect(try fixture.store.licence(itemID: item.id)?.firstPlayedAt == nil, "a non-player started the play clock")
            let played = try mount.run(["dd", "if=" + path, "of=/dev/null", "bs=1M", "count=3"], deadline: 30)
            #expect(played.status == 0, "dd: \(played.stderr)")
            #expect(eventually { (try? fixture.store.licence(itemID: item.id)?.firstPlayedAt) != nil })
        }
    }

    @Test(.enabled(if: FUSEAvailability.isRoot, "needs root to switch users"))
    func anUnprivilegedUserMountsListsReadsAndEvicts() throws {
        // Given: a library and mount point owned by nobody (65534), who mounts it: files
        // belong to the mounting user, so its ls, cat and rm pass default_permissions.
        let library = try StandardLibrary()
        let fixture = library.fixture
        try fixture.reopen()
        try fixture.library.store.close()
        let chown = try ChildProcess.run(["chown", "-R", "65534:65534", fixture.libraryPath, fixture.mountpoint])
        #expect(chown.status == 0)
        // Debian's udev rule makes /dev/fuse 0666 so users can mount; some containers leave
        // it 0600. Give it Debian's mode for this test and put the old one back.
        var device = stat()
        #expect(stat("/dev/fuse", &device) == 0)
        if device.st_mode & 0o006 != 0o006 { chmod("/dev/fuse", 0o666) }
        defer { chmod("/dev/fuse", device.st_mode & 0o7777) }
        let user = MountedLibrary.asUser(65534)
        try withMount(fixture, prefix: user) { (mount: MountedLibrary) throws in
            let ls = try mount.run(["ls", "-ln", "--time-style=+%s", fixture.path("sources/acme")])
            #expect(ls.status == 0, "\(ls.stderr)")
            let listing = Listing(ls.stdout)
            #expect(listing.lines[StandardLibrary.launch]?.uid == 65534)
            #expect(listing.lines[StandardLibrary.launch]?.size == 3_000_000)

            let expected = fixture.directory + "/expected"
            try fixture.originBytes(library.items["ep-001"]!).write(to: URL(fileURLWithPath: expected))
            chmod(expected, 0o644)
            let cmp = try mount.run(["cmp", expected, fixture.path("recent/\(StandardLibrary.launch)")])
            #expect(cmp.status == 0, "\(cmp.stdout)\(cmp.stderr)")

            let rm = try mount.run(["rm", "-f", fixture.path("sources/acme/\(StandardLibrary.tiny)")])
            #expect(rm.status == 0, "\(rm.stderr)")
            let write = try mount.run(["sh", "-c", "echo x > '\(fixture.path("sources/acme/\(StandardLibrary.launch)"))'"])
            #expect(write.status != 0 && write.stderr.contains("Permission denied"), "\(write.stderr)")
        }
        try fixture.reopen()
        #expect(try fixture.store.presentRanges(itemID: library.items["ep-002"]!.id, file: "media").isEmpty)
    }
}
}

/// Random `pread` and `mmap` reads of `path` compared with `expected`; `fstat` size equals
/// `lseek(SEEK_END)`.
func checkRandomReads(path: String, expected: [UInt8], seed: UInt64, count: Int) throws {
    var random = SplitMix(seed: seed)
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else { throw Failure("open \(path): errno \(errno)") }
    defer { close(fd) }
    var info = stat()
    #expect(fstat(fd, &info) == 0 && Int(info.st_size) == expected.count)
    #expect(lseek(fd, 0, SEEK_END) == expected.count)
    for _ in 0..<count {
        let offset = Int(random.next() % UInt64(expected.count))
        let length = Int(random.next() % 300_000) + 1
        var buffer = [UInt8](repeating: 0, count: length)
        let got = pread(fd, &buffer, length, off_t(offset))
        let want = min(length, expected.count - offset)
        #expect(got == want, "pread at \(offset) of \(length)")
        if got == want && buffer[0..<want] != expected[offset..<offset + want] {
            Issue.record("pread at \(offset) of \(length): bytes differ")
            return
        }
    }
    guard let map = mmap(nil, expected.count, PROT_READ, MAP_SHARED, fd, 0), map != MAP_FAILED else {
        throw Failure("mmap: errno \(errno)")
    }
    defer { munmap(map, expected.count) }
    let bytes = map.assumingMemoryBound(to: UInt8.self)
    for _ in 0..<count {
        let offset = Int(random.next() % UInt64(expected.count))
        if bytes[offset] != expected[offset] {
            Issue.record("mmap byte \(offset) differs")
            return
        }
    }
}

/// A small seeded generator (SplitMix64), so a failing sequence can be replayed.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
