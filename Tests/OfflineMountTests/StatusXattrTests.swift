import OfflineTestSupport
import CFuseShim
import Foundation
import OfflineEngine
import OfflineStore
import Testing

/// `.status`, `.status.json`, `.events` (tail -f), xattrs with the size protocol, the two
/// toggles, change notification, and a normal user's control writes (HARDENING 6, 8).
extension RealMounts {
@Suite(.serialized, .enabled(if: FUSEAvailability.hasDevFuse, "no /dev/fuse"),
       .enabled(if: FUSEAvailability.hasFusermount, "no fusermount3 in PATH"))
struct StatusXattrTests {
    @Test func statusFilesAndTailFollowingADownload() throws {
        let library = try StandardLibrary()
        let fixture = library.fixture
        let remote = library.items["ep-004"]!
        try withMount(fixture) { (mount: MountedLibrary) throws in
            let tail = try ChildProcess.start(["tail", "-n", "0", "-f", fixture.path(".events")])
            defer { tail.kill(SIGTERM); _ = tail.wait(deadline: 5) }
            var info = stat()
            // .status has the size of the snapshot stat took, and a read right after gets it whole.
            #expect(stat(fixture.path(".status"), &info) == 0 && info.st_size > 0)
            #expect(FileManager.default.contents(atPath: fixture.path(".status"))?.count == Int(info.st_size))
            let before = stat(fixture.path(".events"), &info) == 0 ? info.st_size : -1
            usleep(300_000)  // tail has opened the file and seeks to its end (-n 0)

            #expect(fixture.control("download acme/ep-004\n") == nil)
            #expect(try eventually(within: 20) { try fixture.current(remote).state == .cached })
            // tail -f saw the state changes (it polls fstat: the size must grow).
            #expect(eventually(within: 5) { tail.currentOutput.contains("queued → downloading") || tail.currentOutput.contains("→ cached") },
                    "\(tail.currentOutput)")
            #expect(eventually(within: 5) { tail.currentOutput.contains("→ cached") }, "\(tail.currentOutput)")
            #expect(stat(fixture.path(".events"), &info) == 0 && info.st_size > before)

            // (A snapshot serves opens for a second: a later one shows the download.)
            var status = ""
            #expect(eventually(within: 5) {
                status = String(decoding: FileManager.default.contents(atPath: fixture.path(".status")) ?? Data(), as: UTF8.self)
                return status.contains("sources/acme/\(StandardLibrary.remote)")
            })
            #expect(status.contains("STATE") && status.contains("cached"), "\(status)")
            let json = try JSONSerialization.jsonObject(with: FileManager.default.contents(atPath: fixture.path(".status.json")) ?? Data())
            let items = try #require((json as? [String: Any])?["items"] as? [[String: Any]])
            let row = try #require(items.first { $0["contentId"] as? String == "ep-004" })
            #expect(row["state"] as? String == "cached" && row["progress"] as? Double == 1)
            #expect(!items.contains { $0["state"] as? String == "discovered" })
            for line in try fixture.eventLines() { #expect(line["seq"] != nil && line["time"] != nil && line["kind"] != nil) }
        }
    }

    @Test func xattrsOnItemsAndFoldersWithTheSizeProtocol() throws {
        let library = try StandardLibrary()
        let fixture = library.fixture
        try withMount(fixture) { (mount: MountedLibrary) throws in
            let item = fixture.path("sources/acme/\(StandardLibrary.launch)")
            let dump = try mount.run(["getfattr", "-d", "-m", "-", item])
            #expect(dump.status == 0, "\(dump.stderr)")
            for line in ["user.offline.state=\"cached\"", "user.offline.progress=\"1.0000\"", "user.offline.bytes=\"3000000\"",
                         "user.offline.size=\"3000000\"", "user.offline.licence=\"none\"", "user.offline.licence.expires=\"never\"",
                         "user.offline.content-id=\"ep-001\"", "user.offline.source=\"acme\"",
                         "user.offline.categories=\"family, news/local\"", "user.offline.locked=\"0\"", "user.offline.download=\"on\"",
                         "user.mime_type=\"video/mp4\"", "user.offline.downloaded-at="] {
                #expect(dump.stdout.contains(line), "\(line) in \(dump.stdout)")
            }
            let folder = try mount.run(["getfattr", "-d", fixture.path("sources/acme")])
            #expect(folder.stdout.contains("user.offline.items=\"5\"") && folder.stdout.contains("user.offline.subscribed=\"1\""),
                    "\(folder.stdout)")
            let state = try mount.run(["getfattr", "-d", fixture.path("state/cached")])
            #expect(state.stdout.contains("user.offline.cached=\"4\""), "\(state.stdout)")
            // Folders count what they hold below them too, each item once: the root the whole
            // library, categories/ the three items in a category, news/ one of its own and one in local/.
            for (folder, count) in [("", 6), ("sources", 6), ("categories", 3), ("categories/news", 2)] {
                let value = try mount.run(["getfattr", "-n", "user.offline.items", "--only-values", fixture.path(folder)])
                #expect(value.stdout == "\(count)", "\(folder): \(value.stdout)\(value.stderr)")
            }

            // Size query, ERANGE, ENODATA, listxattr; never ENOSYS.
            let name = "user.offline.state"
            #expect(getxattr(item, name, nil, 0) == 6)
            var small = [UInt8](repeating: 0, count: 3)
            errno = 0
            #expect(getxattr(item, name, &small, 3) == -1 && errno == ERANGE)
            var buffer = [UInt8](repeating: 0, count: 64)
            #expect(getxattr(item, name, &buffer, 64) == 6 && String(decoding: buffer.prefix(6), as: UTF8.self) == "cached")
            errno = 0
            #expect(getxattr(item, "user.nothing", &buffer, 64) == -1 && errno == ENODATA)
            errno = 0
            #expect(getxattr(item, "security.selinux", &buffer, 64) == -1 && errno == ENODATA)
            let size = listxattr(item, nil, 0)
            #expect(size > 0)
            var names = [CChar](repeating: 0, count: size)
            #expect(listxattr(item, &names, size) == size)
            errno = 0
            #expect(listxattr(item, &names, 4) == -1 && errno == ERANGE)
            // Other writes: EPERM.
            errno = 0
            #expect(setxattr(item, "user.offline.state", "x", 1, 0) == -1 && errno == EPERM)
            #expect(removexattr(item, Xattrs_download) == -1 && errno == EPERM)
        }
    }

    @Test func theTogglesAndNotificationsWithoutWaitingForATimeout() throws {
        let library = try StandardLibrary()
        let fixture = library.fixture
        let remote = library.items["ep-004"]!
        // The kernel may cache names and attributes for a minute and the tree is polled only
        // every minute: whatever ls sees at once came from the command path's notifications.
        try withMount(fixture, options: ["cache-timeout=60s", "refresh=60s"]) { (mount: MountedLibrary) throws in
            #expect(fixture.control("set download-window \(LibraryFixture.closedWindow)\n") == nil)
            let item = fixture.path("sources/acme/\(StandardLibrary.remote)")
            let paused = fixture.path("state/paused/\(StandardLibrary.remote)")
            var info = stat()
            #expect(stat(paused, &info) == -1)  // a cached miss now

            #expect(try mount.run(["setfattr", "-n", "user.offline.download", "-v", "on", item]).status == 0)
            #expect([.queued, .idle].contains(try fixture.current(remote).state))
            #expect(try mount.run(["setfattr", "-n", "user.offline.download", "-v", "paused", item]).status == 0)
            #expect(try fixture.current(remote).state == .paused)
            #expect(eventually(within: 2) { stat(paused, &info) == 0 })
            let ls = try mount.run(["ls", fixture.path("state/paused")])
            #expect(ls.stdout.contains(StandardLibrary.remote))
            let get = try mount.run(["getfattr", "-n", "user.offline.download", "--only-values", item])
            #expect(get.stdout == "paused")

            #expect(try mount.run(["setfattr", "-n", "user.offline.download", "-v", "off", item]).status == 0)
            #expect(try eventually { try fixture.current(remote).state == .discovered })
            #expect(eventually(within: 2) { stat(paused, &info) == -1 })
            let bad = try mount.run(["setfattr", "-n", "user.offline.download", "-v", "maybe", item])
            #expect(bad.status != 0 && bad.stderr.contains("Invalid argument"), "\(bad.stderr)")

            // Unsubscribing: acme's undownloaded items leave the listing at once.
            let acme = fixture.path("sources/acme")
            #expect(try mount.run(["setfattr", "-n", "user.offline.subscribed", "-v", "0", acme]).status == 0)
            #expect(try fixture.store.source(named: "acme")?.subscribed == false)
            #expect(eventually(within: 2) { stat(item, &info) == -1 })
            #expect(try !mount.run(["ls", acme]).stdout.contains(StandardLibrary.remote))
            #expect(try mount.run(["setfattr", "-n", "user.offline.subscribed", "-v", "1", acme]).status == 0)
            #expect(eventually(within: 2) { stat(item, &info) == 0 })
            #expect(try mount.run(["setfattr", "-n", "user.offline.subscribed", "-v", "2", acme]).status != 0)
            #expect(try mount.run(["setfattr", "-n", "user.offline.subscribed", "-v", "1", item]).status != 0)

            // A change made by another process (the engine) shows through the poller's
            // notifications: with refresh=60s it would not, so remount with a short refresh.
        }
        try withMount(fixture, options: ["cache-timeout=60s", "refresh=100ms"]) { (_: MountedLibrary) throws in
            let failed = fixture.path("state/failed/\(StandardLibrary.remote)")
            var info = stat()
            #expect(stat(failed, &info) == -1)
            try fixture.store.setState(itemID: remote.id, state: .failed, error: .httpError)
            #expect(eventually(within: 3) { stat(failed, &info) == 0 })
        }
    }

    @Test(.enabled(if: FUSEAvailability.isRoot, "needs root to switch users"))
    func aNormalUserRemovesTogglesAndWritesTheControlFile() throws {
        let library = try StandardLibrary()
        let fixture = library.fixture
        try fixture.store.setPolicy(name: "download-window", value: LibraryFixture.closedWindow)
        try fixture.reopen()
        try fixture.library.store.close()
        #expect(try ChildProcess.run(["chown", "-R", "65534:65534", fixture.libraryPath, fixture.mountpoint]).status == 0)
        var device = stat()
        #expect(stat("/dev/fuse", &device) == 0)
        if device.st_mode & 0o006 != 0o006 { chmod("/dev/fuse", 0o666) }
        defer { chmod("/dev/fuse", device.st_mode & 0o7777) }
        try withMount(fixture, prefix: MountedLibrary.asUser(65534)) { (mount: MountedLibrary) throws in
            let control = try mount.run(["sh", "-c", "echo 'lock acme/ep-002' > \(fixture.path(".control"))"])
            #expect(control.status == 0, "\(control.stderr)")
            let item = fixture.path("sources/acme/\(StandardLibrary.remote)")
            let on = try mount.run(["setfattr", "-n", "user.offline.download", "-v", "on", item])
            #expect(on.status == 0, "\(on.stderr)")
            let sub = try mount.run(["setfattr", "-n", "user.offline.subscribed", "-v", "1", fixture.path("sources/beta")])
            #expect(sub.status == 0, "\(sub.stderr)")
            // rm evicts an unlocked item (the locked one is refused: ReadAndRefusalTests)
            let rm = try mount.run(["rm", fixture.path("sources/acme/\(StandardLibrary.launch)")])
            #expect(rm.status == 0, "\(rm.stderr)")
            let get = try mount.run(["getfattr", "-n", "user.offline.locked", "--only-values", fixture.path("sources/acme/\(StandardLibrary.tiny)")])
            #expect(get.stdout == "1", "\(get.stderr)")
        }
        try fixture.reopen()
        #expect(try fixture.store.item(id: library.items["ep-004"]!.id)?.requested == true)
    }
}
}

private let Xattrs_download = "user.offline.download"
