import OfflineTestSupport
import CFuseShim
import Foundation
import OfflineEngine
import OfflineFUSE
import OfflineStore
import Testing

/// `.status`, `.status.json`, `.events`, xattrs with the size protocol and the two toggles,
/// the same in both setups (HARDENING 6, 8).
extension RealMounts {
@Suite(.serialized)
struct StatusXattrTests {
    @Test(arguments: MountSetup.available)
    func statusFilesFollowADownload(_ setup: MountSetup) throws {
        let library = try StandardLibrary()
        let fixture = library.fixture
        let remote = library.items["ep-004"]!
        try withLibraryMount(setup, fixture) { (mount: any LibraryMount) throws in
            // .status has the size of the snapshot stat took, and a read right after gets it whole.
            let size = try mount.attributes(".status").size
            #expect(size > 0)
            #expect(try mount.contents(".status").count == Int(size))
            let before = try mount.attributes(".events").size

            try mount.write(".control", "download acme/ep-004\n")
            #expect(eventually(within: 20) { try fixture.current(remote).state == .cached })
            // Programs following .events (tail -f) poll its size: it grows, with the state changes.
            #expect(eventually(within: 5) {
                (try? mount.attributes(".events").size).map { $0 > before } == true
                    && String(decoding: (try? mount.contents(".events")) ?? [], as: UTF8.self).contains("→ cached")
            })

            // (A snapshot serves opens for a second: a later one shows the download.)
            var status = ""
            #expect(eventually(within: 5) {
                status = String(decoding: (try? mount.contents(".status")) ?? [], as: UTF8.self)
                return status.contains("sources/acme/\(StandardLibrary.remote)")
            })
            #expect(status.contains("STATE") && status.contains("cached"), "\(status)")
            let json = try JSONSerialization.jsonObject(with: Data(try mount.contents(".status.json")))
            let items = try #require((json as? [String: Any])?["items"] as? [[String: Any]])
            let row = try #require(items.first { $0["contentId"] as? String == "ep-004" })
            #expect(row["state"] as? String == "cached" && row["progress"] as? Double == 1)
            #expect(!items.contains { $0["state"] as? String == "discovered" })
            let lines = try mount.contents(".events").split(separator: UInt8(ascii: "\n"))
            #expect(!lines.isEmpty)
            for line in lines {
                let event = try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any]
                #expect(event?["seq"] != nil && event?["time"] != nil && event?["kind"] != nil)
            }
        }
    }

    /// `cat .status` once, while a download runs: its speed and time left are there (the
    /// engine measures them every second, not the status file between two reads).
    @Test(arguments: MountSetup.available)
    func aFirstReadOfTheStatusFilesShowsARunningDownloadsSpeed(_ setup: MountSetup) throws {
        let fixture = try LibraryFixture()
        let source = try fixture.addSource("acme")
        let item = try #require(try fixture.merge(source, [ItemSpec(contentID: "big", title: "Big", size: 16 << 20)])["big"])
        let name = try #require(item.fileName)
        let mediaURL = try #require(item.mediaURL.flatMap(URL.init(string:)))
        fixture.origin.setFault(mediaURL.path, .trickle(bytesPerSecond: 1 << 20))
        try withLibraryMount(setup, fixture) { (mount: any LibraryMount) throws in
            try mount.write(".control", "download sources/acme/\(name)\n")
            // Once the engine has measured it (its first progress line)
            #expect(eventually(within: 20) { !EventLinesMountTests.lines(mount, kind: "progress").isEmpty })
            // Then the first read of .status.json has its speed, near the origin's 1 MiB/s, and time left
            let json = try JSONSerialization.jsonObject(with: Data(try mount.contents(".status.json")))
            let items = try #require((json as? [String: Any])?["items"] as? [[String: Any]])
            let row = try #require(items.first { $0["contentId"] as? String == "big" })
            #expect(row["state"] as? String == "downloading", "\(row)")
            let speed = try #require(row["speed"] as? Double, "\(row)")
            #expect(speed > 300_000 && speed < 3_000_000, "\(row)")
            #expect((row["eta"] as? Double ?? 0) > 0, "\(row)")
            // And so has the table
            let table = String(decoding: try mount.contents(".status"), as: UTF8.self)
            #expect(table.split(separator: "\n").contains { $0.hasPrefix("downloading") && $0.contains("/s") }, "\(table)")
        }
    }

    @Test(arguments: MountSetup.available)
    func xattrsOnItemsAndFoldersWithTheSizeProtocol(_ setup: MountSetup) throws {
        let library = try StandardLibrary()
        try withLibraryMount(setup, library.fixture) { (mount: any LibraryMount) throws in
            let item = "sources/acme/\(StandardLibrary.launch)"
            // What `getfattr -d -m -` shows: every name listed, with its value.
            let listed = Set(try mount.xattrNames(item))
            for (name, value) in [("user.offline.state", "cached"), ("user.offline.progress", "1.0000"), ("user.offline.bytes", "3000000"),
                                  ("user.offline.size", "3000000"), ("user.offline.licence", "none"),
                                  ("user.offline.licence.expires", "never"), ("user.offline.content-id", "ep-001"),
                                  ("user.offline.source", "acme"), ("user.offline.categories", "family, news/local"),
                                  ("user.offline.locked", "0"), ("user.offline.download", "on"), ("user.mime_type", "video/mp4")] {
                #expect(listed.contains(name), "\(name) in \(listed)")
                #expect(try mount.xattr(item, name) == value, "\(name)")
            }
            #expect(listed.contains("user.offline.downloaded-at"))
            #expect(try !mount.xattr(item, "user.offline.downloaded-at").isEmpty)
            #expect(try mount.xattr("sources/acme", "user.offline.items") == "5")
            #expect(try mount.xattr("sources/acme", "user.offline.subscribed") == "1")
            #expect(try mount.xattr("state/cached", "user.offline.cached") == "4")
            // Folders count what they hold below them too, each item once: the root the whole
            // library, categories/ the three items in a category, news/ one of its own and one in local/.
            for (folder, count) in [("", 6), ("sources", 6), ("categories", 3), ("categories/news", 2)] {
                #expect(try mount.xattr(folder, "user.offline.items") == "\(count)", "\(folder)")
            }

            // Size query, ERANGE, ENODATA, listxattr; never ENOSYS.
            let name = "user.offline.state"
            #expect(try mount.xattrLength(item, name, bufferSize: 0) == 6)
            #expect(throws: Errno.resultOutOfRange) { try mount.xattrLength(item, name, bufferSize: 3) }
            #expect(try mount.xattrLength(item, name, bufferSize: 64) == 6)
            #expect(throws: Errno.noData) { try mount.xattrLength(item, "user.nothing", bufferSize: 64) }
            // Outside `user.` (what `ls -l` asks of every entry): not supported, so `ls` stops
            // asking; the mount's own attributes still answer after it.
            #expect(throws: Errno.notSupported) { try mount.xattrLength(item, "security.selinux", bufferSize: 64) }
            #expect(throws: Errno.notSupported) { try mount.xattrLength(item, "trusted.anything", bufferSize: 64) }
            #expect(try mount.xattrLength(item, name, bufferSize: 64) == 6)
            let size = try mount.xattrNamesLength(item, bufferSize: 0)
            #expect(size > 0)
            #expect(try mount.xattrNamesLength(item, bufferSize: size) == size)
            #expect(throws: Errno.resultOutOfRange) { try mount.xattrNamesLength(item, bufferSize: 4) }
            // Other writes: EPERM; outside `user.` (`setfacl`, `chcon`): not supported.
            #expect(throws: Errno.notPermitted) { try mount.setXattr(item, "user.offline.state", "x") }
            #expect(throws: Errno.notPermitted) { try mount.removeXattr(item, "user.offline.download") }
            #expect(throws: Errno.notSupported) { try mount.setXattr(item, "trusted.anything", "x") }
            #expect(throws: Errno.notSupported) { try mount.removeXattr(item, "trusted.anything") }
        }
    }

    @Test(arguments: MountSetup.available)
    func theTogglesDownloadPauseCancelAndUnsubscribe(_ setup: MountSetup) throws {
        let library = try StandardLibrary()
        let fixture = library.fixture
        let remote = library.items["ep-004"]!
        try withLibraryMount(setup, fixture, options: ["refresh=100ms"]) { (mount: any LibraryMount) throws in
            // Given: a download window that is closed now, so requested items wait.
            try mount.write(".control", "set download-window \(LibraryFixture.closedWindow)\n")
            let item = "sources/acme/\(StandardLibrary.remote)"

            try mount.setXattr(item, "user.offline.download", "on")
            #expect([.queued, .idle].contains(try fixture.current(remote).state))
            try mount.setXattr(item, "user.offline.download", "paused")
            #expect(try fixture.current(remote).state == .paused)
            #expect(eventually(within: 2) { (try? mount.names("state/paused"))?.contains(StandardLibrary.remote) == true })
            #expect(try mount.xattr(item, "user.offline.download") == "paused")

            try mount.setXattr(item, "user.offline.download", "off")
            #expect(eventually { try fixture.current(remote).state == .discovered })
            #expect(eventually(within: 2) { (try? mount.names("state/paused"))?.contains(StandardLibrary.remote) == false })
            #expect(throws: Errno.invalidArgument) { try mount.setXattr(item, "user.offline.download", "maybe") }

            // Unsubscribing: acme's undownloaded items leave the listing at once.
            try mount.setXattr("sources/acme", "user.offline.subscribed", "0")
            #expect(try fixture.store.source(named: "acme")?.subscribed == false)
            #expect(eventually(within: 2) { (try? mount.attributes(item)) == nil })
            #expect(try !mount.names("sources/acme").contains(StandardLibrary.remote))
            try mount.setXattr("sources/acme", "user.offline.subscribed", "1")
            #expect(eventually(within: 2) { (try? mount.attributes(item))?.size == 500_000 })
            #expect(throws: Errno.invalidArgument) { try mount.setXattr("sources/acme", "user.offline.subscribed", "2") }
            #expect(throws: Errno.self) { try mount.setXattr(item, "user.offline.subscribed", "1") }

            // A change made by another process (the engine) shows with the next tree refresh.
            #expect(throws: Errno.noSuchFileOrDirectory) { try mount.attributes("state/failed/\(StandardLibrary.remote)") }
            try fixture.store.setState(itemID: remote.id, state: .failed, error: .httpError)
            #expect(eventually(within: 3) { (try? mount.attributes("state/failed/\(StandardLibrary.remote)")) != nil })
        }
    }
}

/// What only the kernel shows: `tail -f` following `.events`, the kernel's caches of names and
/// attributes kept right by notifications, and another user's permissions.
@Suite(.serialized, .enabled(if: FUSEAvailability.hasDevFuse, "no /dev/fuse"),
       .enabled(if: FUSEAvailability.hasFusermount, "no fusermount3 in PATH"))
struct StatusXattrKernelTests {
    @Test func tailFollowsTheEventsOfADownload() throws {
        let library = try StandardLibrary()
        let fixture = library.fixture
        let remote = library.items["ep-004"]!
        try withMount(fixture) { (_: MountedLibrary) throws in
            let tail = try ChildProcess.start(["tail", "-n", "0", "-f", fixture.path(".events")])
            defer { tail.kill(SIGTERM); _ = tail.wait(deadline: 5) }
            // tail has opened the file and is at its end (-n 0), so it misses none of the lines.
            // The end is read again each time: the engine, starting beside the first requests,
            // may log an event after tail opened the file.
            var info = stat()
            var before: Int64 = -1
            #expect(eventually(within: 5) {
                before = stat(fixture.path(".events"), &info) == 0 ? Int64(info.st_size) : -1
                return hasOpen(tail.pid, fixture.path(".events"), at: before)
            })

            #expect(fixture.control("download acme/ep-004\n") == nil)
            #expect(eventually(within: 20) { try fixture.current(remote).state == .cached })
            // tail -f saw the state changes (it polls fstat: the size must grow).
            #expect(eventually(within: 5) { tail.currentOutput.contains("queued → downloading") || tail.currentOutput.contains("→ cached") },
                    "\(tail.currentOutput)")
            #expect(eventually(within: 5) { tail.currentOutput.contains("→ cached") }, "\(tail.currentOutput)")
            #expect(stat(fixture.path(".events"), &info) == 0 && Int64(info.st_size) > before)
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
            #expect(eventually { try fixture.current(remote).state == .discovered })
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

/// Whether process `pid` has `path` open at `offset` (from `/proc/<pid>/fd` and `fdinfo`).
private func hasOpen(_ pid: pid_t, _ path: String, at offset: Int64) -> Bool {
    let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
    return descriptors.contains { fd in
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)")) == path
            && (try? String(contentsOfFile: "/proc/\(pid)/fdinfo/\(fd)", encoding: .utf8))?.hasPrefix("pos:\t\(offset)\n") == true
    }
}
