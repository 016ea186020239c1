import Foundation
import OfflineTestSupport
import Testing

@Suite("offlinefs download / pause / resume / cancel / status, as a user runs them")
struct DownloadCommandTests {
    /// A JSON catalog with two generated media files on `origin`.
    private func setUp(_ origin: TestOrigin, sizes: [Int64] = [300_000, 1_500_000]) throws -> (CLIRunner, [String]) {
        var items: [String] = []
        for (index, size) in sizes.enumerated() {
            origin.serve("/m\(index).mp4", .generated(size: size, seed: UInt64(index + 1), contentType: "video/mp4"))
            items.append(#"{"id": "m\#(index)", "title": "Movie \#(index)", "type": "video", "url": "/m\#(index).mp4", "size": \#(size)}"#)
        }
        let url = origin.serveFeed(path: "/catalog.json", json: #"{"offlinefs": 1, "items": [\#(items.joined(separator: ","))]}"#)
        let cli = CLIRunner()
        try cli.run("source", "add", "acme", url)
        let sync = try cli.run("sync")
        #expect(sync.status == 0, "\(sync.stderr)")
        return (cli, sizes.indices.map { "acme/m\($0)" })
    }

    /// `offlinefs download <reference> --wait` in the background: an engine the test ends.
    private func startEngine(downloading reference: String, _ cli: CLIRunner) throws -> Process {
        let engine = Process()
        engine.executableURL = CLIRunner.executable
        engine.arguments = ["download", reference, "--wait", "--library", cli.library.path]
        engine.standardOutput = FileHandle.nullDevice
        engine.standardError = FileHandle.nullDevice
        try engine.run()
        return engine
    }

    @Test func downloadWaitFetchesRealFilesWithProgress() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let (cli, refs) = try setUp(origin)
        defer { cli.removeLibrary() }
        // When downloaded in the foreground, output not a terminal
        let result = try cli.run("download", refs[0], refs[1], "--wait")
        // Then both end cached, with plain progress lines
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stdout.contains("100.0%"), "\(result.stdout)")
        #expect(result.stdout.contains("Movie 1 [m1].mp4 (cached)"), "\(result.stdout)")
        #expect(!result.stdout.contains("\u{1B}["), "no terminal codes when not a terminal")
        // And status --json shows them cached, and the cache holds the origin's bytes
        let status = try cli.run("status", "--json")
        let items = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [[String: Any]])
        #expect(items.count == 2)
        #expect(items.allSatisfy { $0["state"] as? String == "cached" && $0["progress"] as? Double == 1 })
        let id = try #require(items.first { $0["contentId"] as? String == "m1" }?["id"] as? Int)
        let bytes = try Data(contentsOf: cli.library.appendingPathComponent("cache/\(id)/media"))
        #expect(bytes == TestOrigin.generatedBytes(size: 1_500_000, seed: 2))
    }

    /// docs/hooks.md: what `download --wait` records runs the hook, its last event too.
    @Test func downloadWaitRunsTheHookForEveryItemItDownloaded() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let (cli, refs) = try setUp(origin)
        defer { cli.removeLibrary() }
        let log = cli.library.appendingPathComponent("hook.log")
        try cli.run("set", "hook", "echo \"$OFFLINEFS_EVENT $OFFLINEFS_CONTENT_ID\" >> '\(log.path)'")
        let result = try cli.run("download", refs[0], refs[1], "--wait")
        #expect(result.status == 0, "\(result.stderr)")
        let lines = Set((try? String(contentsOf: log, encoding: .utf8))?.split(separator: "\n").map(String.init) ?? [])
        #expect(lines.isSuperset(of: ["cached m0", "cached m1"]), "\(lines)")
    }

    /// `timeout`, `kill` and a service stop send SIGTERM: the engine of `download --wait` stops
    /// as a mount's does (it had been killed outright, leaving its hook's process running and
    /// the item `downloading` with no engine), then the process ends by that signal.
    @Test func downloadWaitStopsItsEngineOnSIGTERM() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let (cli, refs) = try setUp(origin)
        defer { cli.removeLibrary() }
        origin.setFault("/m1.mp4", .stallBeforeHeaders(seconds: 60))
        defer { origin.releaseStalls() }
        let hookPID = cli.library.appendingPathComponent("hook.pid")
        try cli.run("set", "hook", "echo $$ > '\(hookPID.path)'; exec sleep 60")
        let download = try ChildProcess.start([CLIRunner.executable.path, "download", refs[0], refs[1], "--wait",
                                               "--library", cli.library.path])
        defer { if !download.wait(deadline: 0) { download.kill(SIGKILL); _ = download.wait(deadline: 5) } }
        // Once the first item's hook runs (the second item still waits on its origin)
        let deadline = Date().addingTimeInterval(15)
        var pid: pid_t?
        while pid == nil, Date() < deadline {
            pid = (try? String(contentsOf: hookPID, encoding: .utf8)).flatMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            usleep(20_000)
        }
        let hook = try #require(pid)
        download.kill(SIGTERM)
        #expect(download.wait(deadline: 10))
        let result = download.result()
        #expect(result.signal == SIGTERM, "status \(result.status) signal \(String(describing: result.signal)): \(result.stderr)")
        #expect(kill(hook, 0) != 0, "the hook's process \(hook) still runs")
        let queued = try cli.run("ls", "--state", "queued")
        #expect(queued.stdout.contains("Movie 1"), "\(queued.stdout)")
    }

    @Test func progressBarsOnATerminal() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else {
            print("skipped: /usr/bin/script (util-linux) is needed to run the command on a pseudo-terminal")
            return
        }
        let origin = try TestOrigin()
        defer { origin.stop() }
        let (cli, refs) = try setUp(origin, sizes: [2_000_000])
        defer { cli.removeLibrary() }
        origin.setFault("/m0.mp4", .trickle(bytesPerSecond: 2_000_000))
        // When run on a pseudo-terminal
        let command = "\(CLIRunner.executable.path) download \(refs[0]) --wait --library \(cli.library.path)"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qec", command, "/dev/null"]
        let out = Pipe()
        process.standardOutput = out
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        // Then the bar is redrawn in place and ends full, with speed and ETA while moving
        #expect(process.terminationStatus == 0, "\(output)")
        #expect(output.contains("\u{1B}[2K"), "\(output)")
        #expect(output.contains("[########################] 100.0%"), "\(output)")
        #expect(output.contains("/s"), "a speed was shown: \(output)")
        #expect(output.range(of: "ETA [0-9]+s", options: .regularExpression) != nil, "an ETA was shown: \(output)")
    }

    @Test func aSecondEngineIsRefusedWithTheHoldersPid() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let (cli, refs) = try setUp(origin)
        defer { cli.removeLibrary() }
        origin.setFault("/m1.mp4", .stallBeforeHeaders(seconds: 30))
        // Given an engine running download --wait
        let first = try startEngine(downloading: refs[1], cli)
        defer {
            // SIGKILL: the test runner's children may inherit an ignored SIGTERM.
            kill(first.processIdentifier, SIGKILL)
            first.waitUntilExit()
            origin.releaseStalls()
        }
        let lockFile = cli.library.appendingPathComponent("engine.lock")
        let deadline = Date().addingTimeInterval(15)
        while (try? String(contentsOf: lockFile, encoding: .utf8))?.hasPrefix("\(first.processIdentifier)") != true,
              Date() < deadline { usleep(5000) }
        // When a second engine starts on the same library
        let second = try cli.run("download", refs[0], "--wait")
        // Then it is refused, naming the first
        #expect(second.status != 0)
        #expect(second.stderr.contains("another engine is running on this library (pid \(first.processIdentifier))"),
                "\(second.stderr)")
        // And a state-changing command says why it cannot act now
        let pause = try cli.run("pause", refs[0])
        #expect(pause.status != 0)
        #expect(pause.stderr.contains("pid \(first.processIdentifier)"), "\(pause.stderr)")
        // While read-only status still works and names the engine, its item downloading
        let status = try cli.run("status")
        #expect(status.status == 0)
        #expect(status.stdout.contains("engine: pid \(first.processIdentifier)"), "\(status.stdout)")
        #expect(status.stdout.contains("downloading"), "\(status.stdout)")
        // And once that engine is killed, status shows its item queued (nothing downloads)
        kill(first.processIdentifier, SIGKILL)
        first.waitUntilExit()
        let after = try cli.run("status")
        #expect(!after.stdout.contains("downloading") && after.stdout.contains("queued"), "\(after.stdout)")
        #expect(!after.stdout.contains("engine: pid"), "\(after.stdout)")
    }

    /// `source remove` forgets the source's items and their cached files, not only their rows.
    @Test func sourceRemoveRemovesItsItemsCachedFiles() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let (cli, refs) = try setUp(origin)
        defer { cli.removeLibrary() }
        let download = try cli.run("download", refs[0], "--wait")
        #expect(download.status == 0, "\(download.stderr)")
        let cache = cli.library.appendingPathComponent("cache").path
        let before = try FileManager.default.contentsOfDirectory(atPath: cache)
        #expect(!before.isEmpty)
        let removed = try cli.run("source", "remove", "acme")
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: cache).isEmpty)
    }

    /// One `offlinefs status` (not `--watch`) while a download runs shows its speed and time left.
    @Test func statusShowsARunningDownloadsSpeedAndTimeLeft() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let (cli, refs) = try setUp(origin)
        defer { cli.removeLibrary() }
        origin.setFault("/m1.mp4", .trickle(bytesPerSecond: 100_000))
        // Given an engine downloading a 1.5 MB item at 100 kB/s
        let engine = try startEngine(downloading: refs[1], cli)
        defer {
            kill(engine.processIdentifier, SIGKILL)
            engine.waitUntilExit()
        }
        let deadline = Date().addingTimeInterval(15)
        while try !cli.run("status").stdout.contains("downloading"), Date() < deadline { usleep(50_000) }
        // When status is asked once, for a script and for a person
        let json = try cli.run("status", "--json")
        let text = try cli.run("status")
        // Then the item has a speed near the link's and a time left
        let items = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        let item = try #require(items.first { $0["contentId"] as? String == "m1" }, "\(json.stdout)")
        #expect(item["state"] as? String == "downloading")
        let speed = try #require(item["speed"] as? Double, "\(item)")
        #expect(speed > 30_000 && speed < 300_000, "\(item)")
        #expect((item["eta"] as? Double ?? 0) > 0, "\(item)")
        #expect(text.stdout.contains("/s"), "\(text.stdout)")
    }

    @Test func commandsWithoutAnEngineChangeTheStore() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let (cli, refs) = try setUp(origin)
        defer { cli.removeLibrary() }
        let queued = try cli.run("download", refs[0])
        #expect(queued.stdout.contains("queued"), "\(queued.stdout)")
        #expect(try cli.run("pause", refs[0]).stdout.contains("paused"))
        #expect(try cli.run("status").stdout.contains("paused"))
        #expect(try cli.run("resume", refs[0]).stdout.contains("queued"))
        #expect(try cli.run("cancel", refs[0]).stdout.contains("cancelled"))
        #expect(try cli.run("lock", refs[1]).status == 0)
        let evict = try cli.run("evict", refs[1])
        #expect(evict.status != 0)
        #expect(evict.stderr.contains("locked"), "\(evict.stderr)")
        let delete = try cli.run("delete", refs[1])
        #expect(delete.status != 0 && delete.stderr.contains("is locked; unlock it first"), "\(delete.stderr)")
        #expect(try cli.run("unlock", refs[1]).status == 0)
        #expect(try cli.run("delete", refs[1]).stdout.contains("deleted"))
        let missing = try cli.run("pause", "acme/nothing")
        #expect(missing.status != 0)
        #expect(missing.stderr.contains("no item 'acme/nothing'"), "\(missing.stderr)")
    }
}
