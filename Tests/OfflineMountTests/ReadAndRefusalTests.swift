import Foundation
import OfflineEngine
import OfflineTestSupport
import OfflineStore
import Testing

/// Reads of cached items, refused writes, eviction by `rm`, licences, hostile names, the
/// origin offline and an unprivileged user (HARDENING tests 3, 4, 6, 7, 13).
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

    @Test func writesAreRefusedEvenForRoot() throws {
        let library = try StandardLibrary()
        let fixture = library.fixture
        try withMount(fixture) { (mount: MountedLibrary) throws in
            let item = fixture.path("sources/acme/\(StandardLibrary.launch)")
            func fails(_ expected: Int32, _ what: String, _ call: () -> Int32) {
                errno = 0
                let rc = call()
                #expect(rc == -1 && errno == expected, "\(what): rc \(rc) errno \(errno), expected \(expected)")
            }
            // Data: EACCES
            fails(EACCES, "open O_WRONLY") { open(item, O_WRONLY) }
            fails(EACCES, "open O_RDWR") { open(item, O_RDWR) }
            fails(EACCES, "open O_RDONLY|O_TRUNC") { open(item, O_RDONLY | O_TRUNC) }
            fails(EACCES, "open O_WRONLY|O_TRUNC") { open(item, O_WRONLY | O_TRUNC) }
            fails(EACCES, "truncate") { truncate(item, 0) }
            fails(EACCES, "create") { open(fixture.path("sources/acme/new.mp4"), O_WRONLY | O_CREAT, 0o644) }
            // Namespace and metadata: EPERM
            fails(EPERM, "rename") { rename(item, fixture.path("sources/acme/renamed.mp4")) }
            fails(EPERM, "rename folder") { rename(fixture.path("sources/acme"), fixture.path("sources/zed")) }
            fails(EPERM, "mkdir") { mkdir(fixture.path("sources/acme/folder"), 0o755) }
            fails(EPERM, "rmdir") { rmdir(fixture.path("sources/beta")) }
            fails(EPERM, "link") { link(item, fixture.path("sources/acme/linked.mp4")) }
            fails(EPERM, "symlink") { symlink("x", fixture.path("sources/acme/symlink")) }
            fails(EPERM, "chmod") { chmod(item, 0o600) }
            fails(EPERM, "chown") { chown(item, 1, 1) }
            fails(EPERM, "utimens") { utimensat(AT_FDCWD, item, nil, 0) }
            fails(EPERM, "rm of a thumbnail") { unlink(fixture.path("sources/acme/\(StandardLibrary.launchSideFiles[0])")) }
            let setfattr = try mount.run(["setfattr", "-n", "user.offline.anything", "-v", "1", item])
            #expect(setfattr.status != 0 && setfattr.stderr.contains("Operation not permitted"), "\(setfattr.stderr)")
            // Nothing changed.
            let data = FileManager.default.contents(atPath: item)
            #expect(data == fixture.originBytes(library.items["ep-001"]!))
        }
    }

    @Test func rmEvictsTheCachedBytesAndTheItemStaysListed() throws {
        let library = try StandardLibrary()
        let fixture = library.fixture
        let item = library.items["b-1"]!
        try withMount(fixture, options: ["refresh=100ms"]) { (mount: MountedLibrary) throws in
            // The page cache holds the bytes (keep_cache) before the rm.
            #expect(FileManager.default.contents(atPath: fixture.path("sources/beta/\(StandardLibrary.other)"))?.count == 200_000)
            let rm = try mount.run(["rm", fixture.path("categories/news/\(StandardLibrary.other)")])
            #expect(rm.status == 0, "\(rm.stderr)")

            // Then: the store holds no bytes, the item is remote again, and still listed
            try fixture.reopen()
            #expect(try fixture.store.presentRanges(itemID: item.id, file: "media").isEmpty)
            #expect(try fixture.store.item(id: item.id)?.state == .discovered)
            #expect(names(fixture.path("sources/beta")).contains(StandardLibrary.other))
            #expect(waitUntil { !names(fixture.path("state/cached")).contains(StandardLibrary.other) })
            #expect(names(fixture.path("categories/news")).contains(StandardLibrary.other))
        }
    }

    @Test func rmOfALockedItemIsRefusedAndKeepsItsBytes() throws {
        let library = try StandardLibrary()
        let fixture = library.fixture
        let item = library.items["b-1"]!
        try fixture.store.setLocked(itemID: item.id, true)
        try withMount(fixture, options: ["refresh=100ms"]) { (mount: MountedLibrary) throws in
            // When: rm of the locked item
            let rm = try mount.run(["rm", fixture.path("sources/beta/\(StandardLibrary.other)")])

            // Then: refused as "not permitted", and the bytes stay
            #expect(rm.status != 0)
            #expect(rm.stderr.contains("Operation not permitted"), "\(rm.stderr)")
            try fixture.reopen()
            #expect(try !fixture.store.presentRanges(itemID: item.id, file: "media").isEmpty)
            #expect(try fixture.store.item(id: item.id)?.state == .cached)
        }
    }

    @Test func anOpenItemIsEvictedOnlyAtItsLastClose() throws {
        let library = try StandardLibrary()
        let fixture = library.fixture
        let item = library.items["ep-001"]!
        try withMount(fixture) { (_: MountedLibrary) throws in
            let path = fixture.path("sources/acme/\(StandardLibrary.launch)")
            let fd = open(path, O_RDONLY)
            #expect(fd >= 0)
            #expect(unlink(path) == 0)
            // Still open: the bytes stay, the reader keeps reading them.
            #expect(try fixture.store.presentRanges(itemID: item.id, file: "media") == [0..<3_000_000])
            var buffer = [UInt8](repeating: 0, count: 4096)
            #expect(pread(fd, &buffer, 4096, 2_000_000) == 4096)
            #expect(buffer == [UInt8](fixture.originBytes(item)[2_000_000..<2_004_096]))
            close(fd)
            #expect(waitUntil { (try? fixture.store.presentRanges(itemID: item.id, file: "media").isEmpty) == true })
        }
    }

    @Test func anExpiredLicenceRefusesOpenWithKeyExpired() throws {
        let fixture = try LibraryFixture()
        let source = try fixture.addSource("rentals")
        let items = try fixture.merge(source, [
            ItemSpec(contentID: "old", title: "Old Rental", size: 1000, seed: 3, licence: LicenceTerms(kind: .rental, rentalDuration: 60)),
            ItemSpec(contentID: "new", title: "New Rental", size: 1000, seed: 4, licence: LicenceTerms(kind: .rental, rentalDuration: 86_400)),
        ])
        for (id, expires) in [("old", Date().addingTimeInterval(-60)), ("new", Date().addingTimeInterval(86_400))] {
            try fixture.cache(items[id]!)
            try fixture.store.putLicence(Licence(itemID: items[id]!.id, terms: LicenceTerms(kind: .rental, rentalDuration: 60),
                                                 acquiredAt: Date().addingTimeInterval(-120), expiresAt: expires))
        }
        try withMount(fixture) { (_: MountedLibrary) throws in
            errno = 0
            #expect(open(fixture.path("sources/rentals/Old Rental [old].mp4"), O_RDONLY) == -1 && errno == EKEYEXPIRED)
            // Listing and attributes still answer.
            #expect(inode(fixture.path("sources/rentals/Old Rental [old].mp4")) != 0)
            let data = FileManager.default.contents(atPath: fixture.path("sources/rentals/New Rental [new].mp4"))
            #expect(data == fixture.originBytes(items["new"]!))
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
            #expect(waitUntil { (try? fixture.store.licence(itemID: item.id)?.firstPlayedAt) != nil })
        }
    }

    @Test func hostileNamesAreListedSafelyDistinctAndStable() throws {
        let fixture = try LibraryFixture()
        let source = try fixture.addSource("hostile")
        let titles = ["a/b/../../etc/passwd", ".", "..", ".hidden", "nul\u{0}byte", "bell\u{7}tab\tnewline\n", "-rf --no-preserve-root",
                      "caf\u{E9}", "cafe\u{301}", "\u{FFFD}\u{FFFD}", "right\u{202E}4pm.exe", String(repeating: "é", count: 200),
                      String(repeating: "日", count: 120), String(repeating: "😀", count: 90), "same", "same", ""]
        let specs = titles.enumerated().map { index, title in
            ItemSpec(contentID: index == 15 ? "dup/../x" : "id-\(index)", title: title, size: Int64(index + 1), seed: UInt64(index),
                     categories: [["bad/name"], [".."], ["ok", "."]])
        }
        let items = try fixture.merge(source, specs)
        for item in items.values { try fixture.cache(item) }
        var firstListing: [String: UInt64] = [:]
        try withMount(fixture) { (mount: MountedLibrary) throws in
            let listing = try directoryInodes(fixture.path("sources/hostile"))
            firstListing = listing
            #expect(listing.count == titles.count)
            #expect(Set(listing.values).count == titles.count)
            for (name, ino) in listing {
                #expect(!name.contains("/") && !name.hasPrefix(".") && name.utf8.count <= 255, "\(name.debugDescription)")
                #expect(!name.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "\(name.debugDescription)")
                #expect(inode(fixture.path("sources/hostile/\(name)")) == ino, "\(name.debugDescription)")
            }
            // Each name reads its own item's bytes.
            for item in items.values {
                let name = try #require(item.fileName)
                #expect(FileManager.default.contents(atPath: fixture.path("sources/hostile/\(name)")) == fixture.originBytes(item))
            }
            // Category names are made safe too.
            let categories = names(fixture.path("categories"))
            #expect(categories.count == 3 && !categories.contains("..") && categories.allSatisfy { !$0.contains("/") }, "\(categories)")
            let ls = try mount.run(["ls", "-laR", fixture.mountpoint])
            #expect(ls.status == 0, "\(ls.stderr)")
        }
        try withMount(fixture) { (_: MountedLibrary) throws in
            #expect(try directoryInodes(fixture.path("sources/hostile")) == firstListing)
        }
    }

    @Test func withTheOriginOfflineCachedItemsReadAndUncachedReadsFailWithinTheBound() throws {
        let library = try StandardLibrary()
        let fixture = library.fixture
        fixture.origin.goOffline()
        try withMount(fixture, options: ["read-timeout=2s"]) { (_: MountedLibrary) throws in
            let cached = FileManager.default.contents(atPath: fixture.path("sources/acme/\(StandardLibrary.launch)"))
            #expect(cached == fixture.originBytes(library.items["ep-001"]!))
            #expect(names(fixture.path("sources/acme")).contains(StandardLibrary.remote))

            let start = ContinuousClock.now
            let fd = open(fixture.path("sources/acme/\(StandardLibrary.remote)"), O_RDONLY)
            #expect(fd >= 0)
            defer { close(fd) }
            var buffer = [UInt8](repeating: 0, count: 4096)
            errno = 0
            #expect(pread(fd, &buffer, 4096, 0) == -1 && errno == EIO)
            #expect(ContinuousClock.now - start < .seconds(3.5))
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
