import OfflineTestSupport
import OfflineFUSE
import Foundation
import OfflineEngine
import OfflineMount
import OfflineStore
import Testing

/// The mount helper's option conversion (pure), and through real mounts: `mount -t
/// fuse.offlinefs` with the helper installed, `offlinefs mount` daemonizing, and the CLI
/// sending state changes through the mount's control file.
struct MountHelperOptionTests {
    @Test(arguments: [
        ("rw,user,nofail,auto,noauto,_netdev,defaults", [String]()),
        ("user,read-timeout=10s,allow_other", ["read-timeout=10s", "allow_other"]),
        ("x-systemd.automount,comment=x,max_read=131072,noexec", ["max_read=131072", "noexec"]),
        ("users,nouser,cache-timeout=5s", ["cache-timeout=5s"]),
        ("ro,user,noauto", ["ro"]),
        ("", []),
    ])
    func convertDropsMountOnlyOptions(options: String, expected: [String]) {
        #expect(MountHelper.convert(options) == expected)
    }

    @Test func parseFollowsMountsHelperSyntax() throws {
        let request = try MountHelper.parse(["/lib", "/mnt", "-o", "rw,user,read-timeout=3s", "-n", "-t", "fuse.offlinefs"])
        #expect(request == MountHelper.Request(library: "/lib", mountpoint: "/mnt", options: ["read-timeout=3s"]))
        #expect(MountHelper.mountArguments(request) == ["mount", "/mnt", "--library", "/lib", "-o", "read-timeout=3s"])
        #expect(try MountHelper.parse(["-sfv", "/a", "/b"]).fake)
        #expect(MountHelper.mountArguments(try MountHelper.parse(["/a", "/b", "-o", "rw"])) == ["mount", "/b", "--library", "/a"])
        #expect(throws: MountHelper.UsageError.self) { try MountHelper.parse(["/a"]) }
        #expect(throws: MountHelper.UsageError.self) { try MountHelper.parse(["/a", "/b", "-o"]) }
        #expect(throws: MountHelper.UsageError.self) { try MountHelper.parse(["/a", "/b", "-z"]) }
    }
}

extension RealMounts {
@Suite(.serialized, .enabled(if: FUSEAvailability.hasDevFuse, "no /dev/fuse"),
       .enabled(if: FUSEAvailability.hasFusermount, "no fusermount3 in PATH"))
struct MountHelperTests {
    static let helperPath = "/sbin/mount.fuse.offlinefs"
    static var repository: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    }

    @Test(.enabled(if: FUSEAvailability.isRoot, "installs a helper in /sbin and runs mount(8)"),
          .enabled(if: !FileManager.default.fileExists(atPath: helperPath), "a mount.fuse.offlinefs is already installed"))
    func mountDashTWithTheHelperMountsAndUnmounts() throws {
        let library = try StandardLibrary()
        let fixture = library.fixture
        try fixture.library.store.close()
        try FileManager.default.copyItem(atPath: Self.repository + "/mount-helpers/mount.offlinefs", toPath: Self.helperPath)
        defer { try? FileManager.default.removeItem(atPath: Self.helperPath) }
        chmod(Self.helperPath, 0o755)

        let mount = try ChildProcess.run(["env", "OFFLINEFS=\(MountedLibrary.executable)", "mount", "-t", "fuse.offlinefs",
                                          "-o", "user,nofail,read-timeout=5s", fixture.libraryPath, fixture.mountpoint],
                                         deadline: 20)
        defer { _ = try? ChildProcess.run(["umount", "-l", fixture.mountpoint]) }
        #expect(mount.status == 0, "\(mount.stdout) \(mount.stderr)")
        #expect(MountTable.wait(for: fixture.mountpoint, mounted: true, deadline: 5))
        let ls = try ChildProcess.run(["ls", fixture.path("sources/acme")])
        #expect(ls.stdout.contains(StandardLibrary.launch), "\(ls.stderr)")
        // The daemon wrote its own pid (after the fork) and the mount point into the lock.
        let holder = EngineLockFile.read(fixture.libraryPath)
        #expect(holder?.mountpoint == fixture.mountpoint)
        #expect(holder.map { kill($0.pid, 0) == 0 } == true)
        let umount = try ChildProcess.run(["umount", fixture.mountpoint])
        #expect(umount.status == 0, "\(umount.stderr)")
        #expect(MountTable.wait(for: fixture.mountpoint, mounted: false, deadline: 5))
        if let pid = holder?.pid { #expect(eventually(within: 10) { kill(pid, 0) != 0 }, "the daemon ends after umount") }
    }

    /// SQLite's locks belong to the process that took them: a library opened before the
    /// daemonizing fork was unlocked in the daemon, and the first `offlinefs status` deleted
    /// the WAL under it, losing everything the mount wrote after. Also: a mount point given
    /// relative to the current folder (the daemon changes to /).
    @Test func aDetachedMountKeepsWhatItWritesWhileOtherProgramsReadTheLibrary() throws {
        let library = try StandardLibrary()
        let fixture = library.fixture
        try fixture.store.close()  // the mount and the CLI alone hold the library
        let cli = MountedLibrary.executable
        let mount = try ChildProcess.run(["sh", "-c", "cd \"$1\" && exec \"$2\" mount mnt --library \"$3\"", "sh",
                                          fixture.directory, cli, fixture.libraryPath], deadline: 20)
        defer {
            _ = try? ChildProcess.run([cli, "unmount", fixture.mountpoint])
            if MountTable.isMounted(fixture.mountpoint) { _ = try? ChildProcess.run(["umount", "-l", fixture.mountpoint]) }
        }
        #expect(mount.status == 0, "\(mount.stderr)")
        #expect(EngineLockFile.read(fixture.libraryPath)?.mountpoint == fixture.mountpoint)
        // Given programs that read the library beside the mount
        let status = try ChildProcess.run([cli, "status", "--library", fixture.libraryPath])
        #expect(status.status == 0, "\(status.stderr)")
        // When the mount downloads an item
        let download = try ChildProcess.run([cli, "download", "acme/ep-004", "--wait", "--library", fixture.libraryPath], deadline: 30)
        #expect(download.status == 0 && download.stdout.contains("(cached)"), "\(download.stdout) \(download.stderr)")
        // Then readers see it cached, during the mount and after it ended
        let during = try ChildProcess.run([cli, "ls", "--state", "cached", "--library", fixture.libraryPath])
        #expect(during.stdout.contains("ep-004"), "\(during.stdout) \(during.stderr)")
        let unmount = try ChildProcess.run([cli, "unmount", fixture.mountpoint])
        #expect(unmount.status == 0, "\(unmount.stderr)")
        #expect(eventually(within: 10) { EngineLockFile.read(fixture.libraryPath).map { kill($0.pid, 0) != 0 } ?? true })
        let after = try ChildProcess.run([cli, "ls", "--state", "cached", "--library", fixture.libraryPath])
        #expect(after.stdout.contains("ep-004"), "\(after.stdout) \(after.stderr)")
    }

    @Test func mountWithoutDashFDaemonizesAndTheCLISendsCommandsThroughIt() throws {
        let library = try StandardLibrary()
        let fixture = library.fixture
        let cli = MountedLibrary.executable
        let mount = try ChildProcess.run([cli, "mount", fixture.mountpoint, "--library", fixture.libraryPath], deadline: 20)
        defer {
            _ = try? ChildProcess.run([cli, "unmount", fixture.mountpoint])
            if MountTable.isMounted(fixture.mountpoint) { _ = try? ChildProcess.run(["umount", "-l", fixture.mountpoint]) }
        }
        // The foreground process returned once the library was served: the first listing
        // right after shows it, with no waiting.
        #expect(mount.status == 0, "\(mount.stderr)")
        #expect(MountTable.isMounted(fixture.mountpoint))
        let sources = try ChildProcess.run(["ls", fixture.path("sources/acme")])
        #expect(sources.stdout.contains(StandardLibrary.launch), "\(sources.stderr)")
        let holder = try #require(EngineLockFile.read(fixture.libraryPath))
        #expect(holder.mountpoint == fixture.mountpoint && kill(holder.pid, 0) == 0)

        // State changes go through .control (the lock would refuse a second engine anyway).
        let set = try ChildProcess.run([cli, "set", "download-window", LibraryFixture.closedWindow, "--library", fixture.libraryPath])
        #expect(set.status == 0, "\(set.stderr)")
        let download = try ChildProcess.run([cli, "download", "acme/ep-004", "--library", fixture.libraryPath])
        #expect(download.status == 0 && download.stdout.contains("running mount"), "\(download.stdout) \(download.stderr)")
        #expect(try fixture.store.item(id: library.items["ep-004"]!.id)?.requested == true)
        // A refusal reports the mount's reason.
        let bad = try ChildProcess.run([cli, "download", "acme/ep-004/nope", "--library", fixture.libraryPath])
        #expect(bad.status != 0 && bad.stderr.contains("no item"), "\(bad.stderr)")
        let events = try fixture.eventLines()
        #expect(events.contains { ($0["message"] as? String)?.contains("download-window") == true })
        // Waiting through the mount ends, as without one, once the item waits on a policy.
        let wait = try ChildProcess.run([cli, "download", "acme/ep-004", "--wait", "--library", fixture.libraryPath], deadline: 20)
        #expect(wait.status == 1 && wait.stdout.contains("(idle: out-of-policy)"), "\(wait.stdout) \(wait.stderr)")

        let unmount = try ChildProcess.run([cli, "unmount", fixture.mountpoint])
        #expect(unmount.status == 0, "\(unmount.stderr)")
        #expect(eventually(within: 10) { kill(holder.pid, 0) != 0 })
    }
}
}

/// The engine lock file's contents (pid, mount point), read without taking the lock.
enum EngineLockFile {
    static func read(_ library: String) -> (pid: Int32, mountpoint: String?)? {
        guard let text = try? String(contentsOfFile: library + "/engine.lock", encoding: .utf8) else { return nil }
        let lines = text.split(separator: "\n").map(String.init)
        guard let pid = lines.first.flatMap({ Int32($0) }) else { return nil }
        return (pid, lines.count > 1 ? lines[1] : nil)
    }
}
