import Foundation
import OfflineEngine
import OfflineFUSE
import OfflineStore
import OfflineTestSupport
import Testing

/// The mount's answers, checked the same way without the kernel (its operations called in
/// this process) and through a real mount: listings, sizes and times, reads cached and not,
/// side files, extended attributes, the control file and refusals. What only the kernel does
/// (its caches, splice, passthrough, permissions, `kill -9`) is tested through real mounts
/// alone, in the other suites.
extension RealMounts {
@Suite(.serialized)
struct BothSetupsTests {
    @Test(arguments: MountSetup.available)
    func foldersListSourcesCategoriesAndItemsWithTheirSizesAndTimes(_ setup: MountSetup) throws {
        let library = try StandardLibrary()
        let launch = try #require(library.items["ep-001"])
        try withLibraryMount(setup, library.fixture) { (mount: any LibraryMount) throws in
            let root = try mount.names("")
            #expect(Set(["sources", "categories", "state", "recent", ".control", ".events"]).isSubset(of: Set(root)), "\(root)")
            #expect(try mount.names("sources") == ["acme", "beta"])
            let acme = try mount.names("sources/acme")
            #expect(acme.contains(StandardLibrary.launch) && acme.contains(StandardLibrary.remote), "\(acme)")
            #expect(Set(StandardLibrary.launchSideFiles).isSubset(of: Set(acme)))
            let local = try mount.names("categories/news/local")
            #expect(local.contains(StandardLibrary.launch) && !local.contains(StandardLibrary.remote), "\(local)")
            let attributes = try mount.attributes("sources/acme/\(StandardLibrary.launch)")
            #expect(attributes.size == 3_000_000)
            #expect(attributes.blocks > 0)
            #expect(attributes.modificationTime.seconds == Int(try #require(launch.publishedAt).timeIntervalSince1970))
            #expect(attributes.changeTime == attributes.modificationTime)
            // Listed in its source, two categories, `state/cached`, `recent` and `unwatched`
            #expect(attributes.linkCount == 6)
            #expect(try mount.attributes("sources/acme/\(StandardLibrary.empty)").size == 0)
        }
    }

    @Test(arguments: MountSetup.available)
    func itemsReadAsTheOriginsBytesCachedOrNotAndSideFilesWhole(_ setup: MountSetup) throws {
        let library = try StandardLibrary()
        let fixture = library.fixture
        let remote = try #require(library.items["ep-004"]), launch = try #require(library.items["ep-001"])
        try withLibraryMount(setup, fixture) { (mount: any LibraryMount) throws in
            // An uncached item, from the origin: a read in the middle, then all of it
            let expected = [UInt8](fixture.originBytes(remote))
            #expect(try mount.read("sources/acme/\(StandardLibrary.remote)", offset: 200_000, count: 4096) == Array(expected[200_000..<204_096]))
            #expect(try mount.contents("categories/family/\(StandardLibrary.remote)") == expected)
            // A side file, whole at its first read
            #expect(try mount.contents("sources/acme/\(StandardLibrary.launchSideFiles[1])") == [UInt8](try fixture.sideFileBytes(launch, "subtitle.en")))
            // A cached item with the origin gone: from the cache
            fixture.origin.goOffline()
            #expect(try mount.contents("sources/acme/\(StandardLibrary.launch)") == [UInt8](fixture.originBytes(launch)))
            #expect(try mount.contents("sources/acme/\(StandardLibrary.tiny)").count == 1)
        }
    }

    @Test(arguments: MountSetup.available)
    func cachedItemsReadAsTheOriginsBytesEverywhereTheyAreListedAndAtRandomOffsets(_ setup: MountSetup) throws {
        let library = try StandardLibrary()
        let fixture = library.fixture
        try withLibraryMount(setup, fixture) { (mount: any LibraryMount) throws in
            // Every cached item, 0 and 1 byte included, in every place it appears
            for (id, name, folder) in [("ep-001", StandardLibrary.launch, "sources/acme"), ("ep-001", StandardLibrary.launch, "recent"),
                                       ("ep-002", StandardLibrary.tiny, "sources/acme"), ("ep-003", StandardLibrary.empty, "state/cached"),
                                       ("b-1", StandardLibrary.other, "categories/news")] {
                #expect(try mount.contents("\(folder)/\(name)") == [UInt8](fixture.originBytes(library.items[id]!)), "\(folder)/\(name)")
            }
            // Seeded random reads of one open file against the origin's bytes (fsx style)
            let expected = [UInt8](fixture.originBytes(library.items["ep-001"]!))
            let file = try mount.open("sources/acme/\(StandardLibrary.launch)")
            defer { file.close() }
            var random = SplitMix(seed: 42)
            for _ in 0..<300 {
                let offset = Int(random.next() % UInt64(expected.count))
                let length = Int(random.next() % 300_000) + 1
                let want = min(length, expected.count - offset)
                #expect(try file.read(offset: Int64(offset), count: length)[...] == expected[offset..<offset + want], "at \(offset) of \(length)")
            }
        }
    }

    @Test(arguments: MountSetup.available)
    func extendedAttributesShowStateAndTakeThePlayMarks(_ setup: MountSetup) throws {
        let library = try StandardLibrary()
        let fixture = library.fixture
        let launch = try #require(library.items["ep-001"])
        try withLibraryMount(setup, fixture) { (mount: any LibraryMount) throws in
            let path = "sources/acme/\(StandardLibrary.launch)"
            #expect(try mount.xattr(path, "user.offline.state") == "cached")
            #expect(try mount.xattr(path, "user.offline.progress") == "1.0000")
            #expect(try mount.xattr(path, "user.offline.content-id") == "ep-001")
            #expect(try mount.xattr("sources/acme/\(StandardLibrary.remote)", "user.offline.state") == "discovered")
            #expect(Set(["user.offline.state", "user.offline.bytes", "user.offline.locked"]).isSubset(of: Set(try mount.xattrNames(path))))
            #expect(throws: Errno.noData) { try mount.xattr(path, "user.offline.no-such-thing") }
            // The mpv script's mark
            try mount.setXattr(path, "user.offline.watched", "1")
            #expect(try fixture.current(launch).watchedAt != nil)
        }
    }

    @Test(arguments: MountSetup.available)
    func theControlFileAppliesCommandsAndRefusesBadLines(_ setup: MountSetup) throws {
        let library = try StandardLibrary()
        let fixture = library.fixture
        let launch = try #require(library.items["ep-001"])
        try withLibraryMount(setup, fixture) { (mount: any LibraryMount) throws in
            try mount.write(".control", "lock acme/ep-001\n")
            #expect(try fixture.current(launch).locked)
            #expect(throws: Errno.invalidArgument) { try mount.write(".control", "frobnicate acme/ep-001\n") }
            #expect(try mount.xattr("sources/acme/\(StandardLibrary.launch)", "user.offline.locked") == "1")
            // An item open for reading is locked too (offlinefs-control(7)), until its last close
            let other = "sources/beta/\(StandardLibrary.other)"
            #expect(try mount.xattr(other, "user.offline.locked") == "0")
            let open = try mount.open(other)
            #expect(try mount.xattr(other, "user.offline.locked") == "1")
            open.close()  // the kernel sends its release after close(2) returns
            #expect(eventually(within: 5) { try mount.xattr(other, "user.offline.locked") == "0" })
        }
    }

    @Test(arguments: MountSetup.available)
    func missingNamesAreNotFoundAndItemsAreNotWritable(_ setup: MountSetup) throws {
        let library = try StandardLibrary()
        try withLibraryMount(setup, library.fixture) { (mount: any LibraryMount) throws in
            #expect(throws: Errno.noSuchFileOrDirectory) { try mount.attributes("sources/acme/No Such [x].mp4") }
            #expect(throws: Errno.noSuchFileOrDirectory) { try mount.names("sources/nobody") }
            #expect(throws: Errno.permissionDenied) { try mount.write("sources/acme/\(StandardLibrary.launch)", "x") }
        }
    }

    @Test(arguments: MountSetup.available)
    func writesAndNameChangesAreRefusedEvenForRoot(_ setup: MountSetup) throws {
        let library = try StandardLibrary()
        let fixture = library.fixture
        try withLibraryMount(setup, fixture) { (mount: any LibraryMount) throws in
            let item = "sources/acme/\(StandardLibrary.launch)"
            // Data: EACCES
            #expect(mount.refusal(.openForWriting, item) == .permissionDenied)
            #expect(mount.refusal(.truncate, item) == .permissionDenied)
            #expect(mount.refusal(.create("new.mp4"), item) == .permissionDenied)
            // Names and metadata: EPERM
            #expect(mount.refusal(.rename(to: "renamed.mp4"), item) == .notPermitted)
            #expect(mount.refusal(.rename(to: "zed"), "sources/acme") == .notPermitted)
            #expect(mount.refusal(.mkdir("folder"), "sources/acme") == .notPermitted)
            #expect(mount.refusal(.rmdir, "sources/beta") == .notPermitted)
            #expect(mount.refusal(.link(to: "linked.mp4"), item) == .notPermitted)
            #expect(mount.refusal(.symlink("symlink"), "sources/acme") == .notPermitted)
            #expect(mount.refusal(.chmod, item) == .notPermitted)
            #expect(mount.refusal(.chown, item) == .notPermitted)
            #expect(throws: Errno.notPermitted) { try mount.remove("sources/acme/\(StandardLibrary.launchSideFiles[0])") }
            #expect(throws: Errno.notPermitted) { try mount.setXattr(item, "user.offline.anything", "1") }
            // Nothing changed
            #expect(try mount.contents(item) == [UInt8](fixture.originBytes(library.items["ep-001"]!)))
        }
    }

    @Test(arguments: MountSetup.available)
    func rmEvictsTheCachedBytesAndTheItemStaysListed(_ setup: MountSetup) throws {
        let library = try StandardLibrary()
        let fixture = library.fixture
        let item = try #require(library.items["b-1"])
        // The tree's own refresh once a minute: what `rm` changes shows before it returns.
        try withLibraryMount(setup, fixture, options: ["refresh=60s"]) { (mount: any LibraryMount) throws in
            #expect(try mount.contents("sources/beta/\(StandardLibrary.other)").count == 200_000)
            #expect(try mount.names("state/cached").contains(StandardLibrary.other))
            let times = (cached: try mount.attributes("state/cached").modificationTime,
                         source: try mount.attributes("sources/beta").modificationTime)
            try mount.remove("categories/news/\(StandardLibrary.other)")
            // Then the store holds no bytes, the item is remote again, and still listed
            #expect(try fixture.store.presentRanges(itemID: item.id, file: "media").isEmpty)
            #expect(try fixture.store.item(id: item.id)?.state == .discovered)
            #expect(try mount.names("sources/beta").contains(StandardLibrary.other))
            #expect(try !mount.names("state/cached").contains(StandardLibrary.other))
            // The folder that lost a name is newer; the one whose names stayed is not.
            #expect(try mount.attributes("state/cached").modificationTime > times.cached)
            #expect(try mount.attributes("sources/beta").modificationTime == times.source)
            #expect(try mount.names("categories/news").contains(StandardLibrary.other))
        }
    }

    @Test(arguments: MountSetup.available)
    func rmOfALockedItemIsRefusedAndKeepsItsBytes(_ setup: MountSetup) throws {
        let library = try StandardLibrary()
        let fixture = library.fixture
        let item = try #require(library.items["b-1"])
        try fixture.store.setLocked(itemID: item.id, true)
        try withLibraryMount(setup, fixture, options: ["refresh=100ms"]) { (mount: any LibraryMount) throws in
            #expect(throws: Errno.notPermitted) { try mount.remove("sources/beta/\(StandardLibrary.other)") }
            // Open elsewhere too (it returned 0 and evicted nothing, then or at the close)
            let open = try mount.open("sources/beta/\(StandardLibrary.other)")
            #expect(throws: Errno.notPermitted) { try mount.remove("sources/beta/\(StandardLibrary.other)") }
            open.close()
            #expect(try !fixture.store.presentRanges(itemID: item.id, file: "media").isEmpty)
            #expect(try fixture.store.item(id: item.id)?.state == .cached)
            // And the reason is where a script looks
            let events = String(decoding: try mount.contents(".events"), as: UTF8.self)
            #expect(events.contains("rm: \(StandardLibrary.other) is locked; unlock it first"), "\(events)")
        }
    }

    @Test(arguments: MountSetup.available)
    func anOpenItemIsEvictedOnlyAtItsLastClose(_ setup: MountSetup) throws {
        let library = try StandardLibrary()
        let fixture = library.fixture
        let item = try #require(library.items["ep-001"])
        try withLibraryMount(setup, fixture) { (mount: any LibraryMount) throws in
            let path = "sources/acme/\(StandardLibrary.launch)"
            let open = try mount.open(path)
            try mount.remove(path)
            // Still open: the bytes stay, the reader keeps reading them
            #expect(try fixture.store.presentRanges(itemID: item.id, file: "media") == [0..<3_000_000])
            #expect(try open.read(offset: 2_000_000, count: 4096) == [UInt8](fixture.originBytes(item)[2_000_000..<2_004_096]))
            open.close()
            #expect(eventually { (try? fixture.store.presentRanges(itemID: item.id, file: "media").isEmpty) == true })
        }
    }

    @Test(arguments: MountSetup.available)
    func anExpiredLicenceRefusesOpenWithKeyExpired(_ setup: MountSetup) throws {
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
        try withLibraryMount(setup, fixture) { (mount: any LibraryMount) throws in
            #expect(throws: Errno(rawValue: EKEYEXPIRED)) { try mount.open("sources/rentals/Old Rental [old].mp4") }
            // Listing and attributes still answer
            #expect(try mount.attributes("sources/rentals/Old Rental [old].mp4").size == 1000)
            #expect(try mount.contents("sources/rentals/New Rental [new].mp4") == [UInt8](fixture.originBytes(items["new"]!)))
        }
    }

    @Test(arguments: MountSetup.available)
    func hostileNamesAreListedSafelyDistinctAndStable(_ setup: MountSetup) throws {
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
        try withLibraryMount(setup, fixture) { (mount: any LibraryMount) throws in
            let names = try mount.names("sources/hostile")
            let listing = try Dictionary(uniqueKeysWithValues: names.map { ($0, try mount.attributes("sources/hostile/\($0)").inode) })
            firstListing = listing
            #expect(listing.count == titles.count)
            #expect(Set(listing.values).count == titles.count)
            for name in names {
                #expect(!name.contains("/") && !name.hasPrefix(".") && name.utf8.count <= 255, "\(name.debugDescription)")
                #expect(!name.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "\(name.debugDescription)")
            }
            // Each name reads its own item's bytes
            for item in items.values {
                let name = try #require(item.fileName)
                #expect(try mount.contents("sources/hostile/\(name)") == [UInt8](fixture.originBytes(item)))
            }
            // Category names are made safe too
            let categories = try mount.names("categories")
            #expect(categories.count == 3 && !categories.contains("..") && categories.allSatisfy { !$0.contains("/") }, "\(categories)")
        }
        // And a second mount gives every name the same inode
        try withLibraryMount(setup, fixture) { (mount: any LibraryMount) throws in
            let names = try mount.names("sources/hostile")
            #expect(try Dictionary(uniqueKeysWithValues: names.map { ($0, try mount.attributes("sources/hostile/\($0)").inode) }) == firstListing)
        }
    }

    @Test(arguments: MountSetup.available)
    func withTheOriginOfflineCachedItemsReadAndUncachedReadsFailWithinTheBound(_ setup: MountSetup) throws {
        let library = try StandardLibrary()
        let fixture = library.fixture
        fixture.origin.goOffline()
        try withLibraryMount(setup, fixture, options: ["read-timeout=2s"]) { (mount: any LibraryMount) throws in
            #expect(try mount.contents("sources/acme/\(StandardLibrary.launch)") == [UInt8](fixture.originBytes(library.items["ep-001"]!)))
            #expect(try mount.names("sources/acme").contains(StandardLibrary.remote))
            let start = ContinuousClock.now
            #expect(throws: Errno.ioError) { try mount.read("sources/acme/\(StandardLibrary.remote)", offset: 0, count: 4096) }
            #expect(ContinuousClock.now - start < .seconds(3.5))
        }
    }
}
}
