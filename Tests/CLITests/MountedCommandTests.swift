import Foundation
import OfflineFUSE
import OfflineTestSupport
import Testing

/// Commands a script runs while the library is mounted: the mount's engine does the work, and
/// the exit status says whether it worked, as it does without a mount.
@Suite(.enabled(if: FileManager.default.isReadableFile(atPath: "/dev/fuse"), "needs /dev/fuse"))
struct MountedCommandTests {
    /// A library following `catalog` (JSON) on `origin` as source `acme`, synced and mounted
    /// (`-o` each of `options`) for `body`, unmounted after it.
    private func withMountedLibrary(_ origin: TestOrigin, catalog: String, options: [String] = [],
                                    _ body: (CLIRunner, String) throws -> Void) throws {
        let url = origin.serveFeed(path: "/catalog.json", json: catalog)
        let cli = CLIRunner()
        defer { cli.removeLibrary() }
        try cli.run("source", "add", "acme", url)
        #expect(try cli.run("sync").status == 0)
        let mountpoint = cli.library.appendingPathComponent("mnt").path
        try FileManager.default.createDirectory(atPath: mountpoint, withIntermediateDirectories: true)
        // `ChildProcess`: Foundation's `Process` does not see a child that forked a daemon end.
        let mounted = try ChildProcess.run([CLIRunner.executable.path, "mount", mountpoint, "--library", cli.library.path]
                                           + options.flatMap { ["-o", $0] }, deadline: 20)
        try #require(mounted.status == 0, "\(mounted.stderr)")
        defer { _ = try? cli.run("unmount", mountpoint) }
        try body(cli, mountpoint)
    }

    @Test func syncAndRenewThroughAMountExitAsTheyDoWithout() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        origin.serve("/film.mp4", .generated(size: 200_000, seed: 3, contentType: "video/mp4"))
        origin.serve("/licence/film", .text(#"{"kind": "rental", "rentalDuration": 7200}"#, contentType: "application/json"))
        let catalog = """
            {"offlinefs": 1, "items": [{"id": "film", "title": "Film", "type": "video", "url": "/film.mp4",
             "size": 200000, "licence": {"kind": "rental", "rentalDuration": 3600, "url": "/licence/film"}}]}
            """
        try withMountedLibrary(origin, catalog: catalog) { cli, mountpoint in
            // A feed that fails: the sync through the mount exits 1 with the reason
            origin.setFault("/catalog.json", .status(500))
            let failed = try cli.run("sync")
            #expect(failed.status == 1 && failed.stderr.contains("acme: failed:") && failed.stderr.contains("500"),
                    "status \(failed.status): \(failed.stdout) \(failed.stderr)")
            origin.clearFaults()
            let synced = try cli.run("sync", "acme")
            #expect(synced.status == 0 && synced.stdout.hasPrefix("acme: "), "status \(synced.status): \(synced.stdout) \(synced.stderr)")

            // A licence server that refuses: renew exits 1; once it answers, 0 with the expiry
            origin.setFault("/licence/film", .status(403))
            let refused = try cli.run("renew", "acme/film")
            #expect(refused.status == 1 && refused.stderr.contains("renew failed"), "status \(refused.status): \(refused.stderr)")
            origin.clearFaults()
            let renewed = try cli.run("renew", "acme/film")
            #expect(renewed.status == 0 && renewed.stdout.contains("licence acquired") && renewed.stdout.contains("expires"),
                    "status \(renewed.status): \(renewed.stdout) \(renewed.stderr)")

            // Several items, the first naming nothing: the others are done all the same, and
            // the status says one failed
            let locks = try cli.run("lock", "acme/nothing", "acme/film")
            #expect(locks.status == 1 && locks.stderr.contains("no item 'acme/nothing'"), "status \(locks.status): \(locks.stderr)")
            let locked = try ChildProcess.run(["getfattr", "--only-values", "-n", "user.offline.locked",
                                               mountpoint + "/sources/acme/Film [film].mp4"])
            #expect(locked.stdout == "1", "\(locked.stdout) \(locked.stderr)")
        }
    }

    /// `cd ~/Media/sources/acme; offlinefs lock *.mp4`: names relative to the current folder
    /// inside the mount are items, as paths from the mount's root are.
    @Test func referencesRelativeToAFolderInTheMountAreItems() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        origin.serve("/film.mp4", .generated(size: 2_000, seed: 3, contentType: "video/mp4"))
        let catalog = #"{"offlinefs": 1, "items": [{"id": "film", "title": "Film", "type": "video", "url": "/film.mp4", "size": 2000}]}"#
        try withMountedLibrary(origin, catalog: catalog) { cli, mountpoint in
            let script = "cd '\(mountpoint)/sources/acme' && '\(CLIRunner.executable.path)' lock *.mp4 --library '\(cli.library.path)'"
                + " && cd .. && '\(CLIRunner.executable.path)' unlock './acme/Film [film].mp4' --library '\(cli.library.path)'"
                + " && cd acme && '\(CLIRunner.executable.path)' lock 'Film [film].mp4' --library '\(cli.library.path)'"
            let result = try ChildProcess.run(["/bin/sh", "-c", script], deadline: 20)
            #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
            let locked = try ChildProcess.run(["getfattr", "--only-values", "-n", "user.offline.locked", mountpoint + "/sources/acme/Film [film].mp4"])
            #expect(locked.stdout == "1", "\(locked.stdout) \(locked.stderr)")
        }
    }

    /// A sync through a mount whose library's disk is full: the engine cannot record its
    /// outcome, so `offlinefs sync` says why and exits 1 instead of waiting for good.
    @Test(.enabled(if: getuid() == 0, "mounting a tmpfs needs root"))
    func aSyncThroughAMountOnAFullDiskSaysSoInsteadOfWaiting() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let url = origin.serveFeed(path: "/catalog.json", json: #"{"offlinefs": 1, "items": [{"id": "a", "title": "A", "url": "/a.mp4", "size": 10}]}"#)
        let cli = CLIRunner()
        defer { cli.removeLibrary() }
        // Given a library on a small disk, synced and mounted
        try FileManager.default.createDirectory(at: cli.library, withIntermediateDirectories: true)
        let tmpfs = try ChildProcess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", cli.library.path])
        try #require(tmpfs.status == 0, "\(tmpfs.stderr)")
        defer { _ = try? ChildProcess.run(["umount", "-l", cli.library.path]) }
        try cli.run("source", "add", "acme", url)
        #expect(try cli.run("sync").status == 0)
        let mountpoint = cli.library.path + "-mnt"
        try FileManager.default.createDirectory(atPath: mountpoint, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: mountpoint) }
        let mounted = try ChildProcess.run([CLIRunner.executable.path, "mount", mountpoint, "--library", cli.library.path], deadline: 20)
        try #require(mounted.status == 0, "\(mounted.stderr)")
        defer { _ = try? cli.run("unmount", mountpoint) }
        // When its disk fills up and the feed changed
        _ = try ChildProcess.run(["dd", "if=/dev/zero", "of=\(cli.library.path)/filler", "bs=64k"], deadline: 20)
        origin.serveFeed(path: "/catalog.json", json: #"{"offlinefs": 1, "items": [{"id": "b", "title": "B", "url": "/b.mp4", "size": 10}]}"#)
        let sync = try ChildProcess.run([CLIRunner.executable.path, "sync", "--library", cli.library.path], deadline: 30)
        // Then the sync says the disk is full, and exits 1
        #expect(sync.status == 1 && sync.stderr.contains("is full"), "status \(sync.status): \(sync.stdout) \(sync.stderr)")
        try? FileManager.default.removeItem(atPath: cli.library.path + "/filler")
    }

    /// `download --wait` follows a mount's engine; when that mount ends first, it says so and
    /// exits 1 instead of waiting for good.
    @Test func downloadWaitThroughAMountEndsWithTheMount() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        origin.serve("/film.mp4", .generated(size: 2_000_000, seed: 4, contentType: "video/mp4"))
        origin.setFault("/film.mp4", .stallBeforeHeaders(seconds: 60))
        defer { origin.releaseStalls() }
        let catalog = #"{"offlinefs": 1, "items": [{"id": "film", "title": "Film", "type": "video", "url": "/film.mp4", "size": 2000000}]}"#
        try withMountedLibrary(origin, catalog: catalog) { cli, mountpoint in
            let download = try ChildProcess.start([CLIRunner.executable.path, "download", "acme/film", "--wait",
                                                   "--library", cli.library.path])
            defer { if !download.wait(deadline: 0) { download.kill(SIGKILL); _ = download.wait(deadline: 5) } }
            // Once it follows the download (its line names the item), the mount goes
            let deadline = Date().addingTimeInterval(10)
            while !download.currentOutput.contains("Film"), Date() < deadline { usleep(20_000) }
            #expect(try cli.run("unmount", mountpoint).status == 0)
            #expect(download.wait(deadline: 10), "download --wait still runs after the mount ended")
            let result = download.result()
            #expect(result.status == 1 && result.stderr.contains("the mount's engine ended before the downloads did"),
                    "status \(result.status): \(result.stderr)")
        }
    }

    /// `download --wait` through a mount ends once the item has spent `retry-limit` back-offs,
    /// as without a mount: the engine's `downloading → idle` takes milliseconds, between two
    /// looks of the watch, which then waited for good.
    @Test func downloadWaitThroughAMountEndsAfterTheRetryBudget() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        origin.serve("/film.mp4", .generated(size: 20_000, seed: 4, contentType: "video/mp4"))
        origin.setFault("/film.mp4", .status(503))
        let catalog = #"{"offlinefs": 1, "items": [{"id": "film", "title": "Film", "type": "video", "url": "/film.mp4", "size": 20000}]}"#
        try withMountedLibrary(origin, catalog: catalog) { cli, _ in
            #expect(try cli.run("set", "retry-limit", "1").status == 0)
            let download = try ChildProcess.run([CLIRunner.executable.path, "download", "acme/film", "--wait",
                                                 "--library", cli.library.path], deadline: 40)
            #expect(download.status == 1 && download.stderr.contains("Film [film].mp4: idle (http-error"),
                    "status \(download.status): \(download.stdout) \(download.stderr)")
        }
    }

    /// A command that would change a library mounted with `-o ro` says so and what to do.
    @Test func aChangeToALibraryMountedReadOnlySaysHowToChangeIt() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let catalog = #"{"offlinefs": 1, "items": [{"id": "film", "title": "Film", "type": "video", "url": "/film.mp4", "size": 1000}]}"#
        try withMountedLibrary(origin, catalog: catalog, options: ["ro"]) { cli, mountpoint in
            let lock = try cli.run("lock", "acme/film")
            #expect(lock.status == 1 && lock.stderr.contains("the library is mounted read-only on \(mountpoint) (-o ro)"),
                    "status \(lock.status): \(lock.stderr)")
        }
    }
}
