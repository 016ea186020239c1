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
        try withLibraryMount(setup, library.fixture) { mount in
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
        try withLibraryMount(setup, fixture) { mount in
            // An uncached item, from the origin: a read in the middle, then all of it
            let expected = [UInt8](fixture.originBytes(remote))
            #expect(try mount.read("sources/acme/\(StandardLibrary.remote)", offset: 200_000, count: 4096) == Array(expected[200_000..<204_096]))
            #expect(try mount.contents("categories/family/\(StandardLibrary.remote)") == expected)
            // A side file, whole at its first read
            #expect(try mount.contents("sources/acme/\(StandardLibrary.launchSideFiles[1])") == [UInt8](try fixture.sideFileBytes(launch, "subtitle.en")))
            // A cached item with the origin gone: from the cache
            try fixture.origin.goOffline()
            #expect(try mount.contents("sources/acme/\(StandardLibrary.launch)") == [UInt8](fixture.originBytes(launch)))
            #expect(try mount.contents("sources/acme/\(StandardLibrary.tiny)").count == 1)
        }
    }

    @Test(arguments: MountSetup.available)
    func extendedAttributesShowStateAndTakeThePlayMarks(_ setup: MountSetup) throws {
        let library = try StandardLibrary()
        let fixture = library.fixture
        let launch = try #require(library.items["ep-001"])
        try withLibraryMount(setup, fixture) { mount in
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
        try withLibraryMount(setup, fixture) { mount in
            try mount.write(".control", "lock acme/ep-001\n")
            #expect(try fixture.current(launch).locked)
            #expect(throws: Errno.invalidArgument) { try mount.write(".control", "frobnicate acme/ep-001\n") }
            #expect(try mount.xattr("sources/acme/\(StandardLibrary.launch)", "user.offline.locked") == "1")
        }
    }

    @Test(arguments: MountSetup.available)
    func missingNamesAreNotFoundAndItemsAreNotWritable(_ setup: MountSetup) throws {
        let library = try StandardLibrary()
        try withLibraryMount(setup, library.fixture) { mount in
            #expect(throws: Errno.noSuchFileOrDirectory) { try mount.attributes("sources/acme/No Such [x].mp4") }
            #expect(throws: Errno.noSuchFileOrDirectory) { try mount.names("sources/nobody") }
            #expect(throws: Errno.permissionDenied) { try mount.write("sources/acme/\(StandardLibrary.launch)", "x") }
        }
    }
}
}
