import Foundation
import Glibc
import OfflineFUSE
import OfflineTestSupport
import Testing

/// The exit statuses of offlinefs(1) EXIT STATUS, one case each, run as a user runs them:
/// 0 for success; 1 for a failure, with one `Error: …` line on stderr that says what to do
/// next and nothing on stdout; 64 for a usage error, with the `Error: …` line and the usage.
@Suite("Exit statuses, as the man page documents them")
struct ExitCodeTests {
    /// A failure: status 1, nothing on stdout, exactly one line on stderr, `Error: …`.
    private func expectFailure(_ output: CLIRunner.Output, _ expected: String,
                               sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(output.status == 1, "status \(output.status): \(output.stderr)", sourceLocation: sourceLocation)
        #expect(output.stdout.isEmpty, "stdout: \(output.stdout)", sourceLocation: sourceLocation)
        let lines = output.stderr.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count == 1, "stderr: \(output.stderr)", sourceLocation: sourceLocation)
        #expect(output.stderr.hasPrefix("Error: "), "stderr: \(output.stderr)", sourceLocation: sourceLocation)
        #expect(output.stderr.contains(expected), "stderr: \(output.stderr)", sourceLocation: sourceLocation)
    }

    /// A usage error: status 64, nothing on stdout, one `Error: …` line then the usage.
    private func expectUsageError(_ output: CLIRunner.Output, _ expected: String,
                                  sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(output.status == 64, "status \(output.status): \(output.stderr)", sourceLocation: sourceLocation)
        #expect(output.stdout.isEmpty, "stdout: \(output.stdout)", sourceLocation: sourceLocation)
        let errorLines = output.stderr.split(separator: "\n").filter { $0.hasPrefix("Error: ") }
        #expect(errorLines.count == 1, "stderr: \(output.stderr)", sourceLocation: sourceLocation)
        #expect(output.stderr.hasPrefix("Error: "), "stderr: \(output.stderr)", sourceLocation: sourceLocation)
        #expect(output.stderr.contains(expected), "stderr: \(output.stderr)", sourceLocation: sourceLocation)
        #expect(output.stderr.contains("Usage: offlinefs"), "stderr: \(output.stderr)", sourceLocation: sourceLocation)
    }

    @Test func successIsZero() throws {
        let cli = CLIRunner()
        defer { cli.removeLibrary() }
        let add = try cli.run("source", "add", "acme", "http://127.0.0.1:1/catalog.json")
        #expect(add.status == 0, "\(add.stderr)")
        let list = try cli.run("ls")
        #expect(list.status == 0, "\(list.stderr)")
        #expect(list.stderr.isEmpty)
    }

    /// `offlinefs ls > list.txt && use list.txt` on a full disk: the output that could not be
    /// written is a failure (it was status 0 for text, and a crash for `--json`).
    @Test(arguments: [["ls"], ["ls", "--json"], ["status"], ["status", "--json"], ["source", "list", "--json"], ["get"]])
    func outputThatCannotBeWrittenIsOne(command: [String]) throws {
        let cli = CLIRunner()
        defer { cli.removeLibrary() }
        try cli.run("source", "add", "acme", "http://127.0.0.1:1/catalog.json")
        let full = try ChildProcess.run(["sh", "-c", "exec \"$0\" \"$@\" > /dev/full", CLIRunner.executable.path]
                                        + command + ["--library", cli.library.path])
        #expect(full.status == 1 && full.stderr == "Error: cannot write the output: No space left on device\n",
                "status \(full.status) signal \(String(describing: full.signal)): \(full.stderr.prefix(300))")
    }

    /// A command that only reads (or acts on items) does not make a library where there is
    /// none: a mistyped path says so instead of showing an empty library it just created.
    @Test func aFolderWithoutALibraryIsOneAndStaysEmpty() throws {
        let cli = CLIRunner()
        defer { cli.removeLibrary() }
        for command in [["ls"], ["status"], ["get"], ["source", "list"], ["sync"], ["pause", "acme/ep-1"]] {
            expectFailure(try cli.run(command), "no library at \(cli.library.path) ('offlinefs source add NAME URL' starts one there")
        }
        #expect(!FileManager.default.fileExists(atPath: cli.library.appendingPathComponent("library.sqlite").path))
    }

    @Test func aLibraryThatCannotBeOpenedIsOne() throws {
        // Given a library path under a regular file
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("offlinefs-file-\(UUID().uuidString)")
        try Data().write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let cli = CLIRunner()
        let output = try cli.run("source", "add", "acme", "http://127.0.0.1:1/catalog.json",
                                 environment: ["OFFLINEFS_LIBRARY": file.appendingPathComponent("library").path])
        expectFailure(output, "cannot open the library at \(file.path)/library: Not a directory")
    }

    @Test func anotherEngineHoldingTheLibraryIsOne() throws {
        // Given a library whose engine lock this test holds, as an engine does
        let cli = CLIRunner()
        defer { cli.removeLibrary() }
        try cli.run("source", "add", "acme", "http://127.0.0.1:1/catalog.json")
        let fd = open(cli.library.appendingPathComponent("engine.lock").path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        try #require(fd >= 0)
        defer { close(fd) }
        try #require(flock(fd, LOCK_EX | LOCK_NB) == 0)
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }

        // Then commands that need the engine's place are refused, naming the holder
        expectFailure(try cli.run("pause", "acme/ep-1"), "pid \(getpid())")
        expectFailure(try cli.run("download", "acme/ep-1", "--wait"), "another engine is running on this library (pid \(getpid()))")
        let mountpoint = cli.library.appendingPathComponent("mnt")
        try FileManager.default.createDirectory(at: mountpoint, withIntermediateDirectories: true)
        expectFailure(try cli.run("mount", mountpoint.path, "-f"), "another engine is running on this library")

        // And when the holder's mount was detached (a lazy unmount while files were open), the
        // error says so instead of asking for an unmount that no longer reaches it
        let detached = Array("\(getpid())\n\(mountpoint.path)\n".utf8)
        _ = ftruncate(fd, 0)
        _ = detached.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        expectFailure(try cli.run("mount", mountpoint.path, "-f"),
                      "the engine of a mount detached from \(mountpoint.path) (pid \(getpid())) still runs")
    }

    /// Bytes that are not UTF-8 in an argument (a name typed under `LC_ALL=C`): refused as a
    /// usage error, not made into a source named with U+FFFD.
    @Test func anArgumentThatIsNotUTF8IsAUsageError() throws {
        let cli = CLIRunner()
        defer { cli.removeLibrary() }
        let result = try ChildProcess.run(["/bin/sh", "-c",
            "'\(CLIRunner.executable.path)' source add \"$(printf 'bad\\377name')\" http://127.0.0.1:1/c.json --library '\(cli.library.path)'"])
        #expect(result.status == 64 && result.stderr.contains("argument 3") && result.stderr.contains("is not valid UTF-8"),
                "status \(result.status): \(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: cli.library.path), "no library made")
    }

    /// A lock file left naming a process that lives but holds no lock (an engine that ended
    /// unreaped, or a pid taken again): status names no engine, and commands run.
    @Test func aLockFileWithoutItsLockNamesNoEngine() throws {
        let cli = CLIRunner()
        defer { cli.removeLibrary() }
        try cli.run("set", "retry-limit", "3")
        try "\(getpid())\n/tmp/somewhere\n".write(to: cli.library.appendingPathComponent("engine.lock"), atomically: true, encoding: .utf8)
        let status = try cli.run("status")
        #expect(status.status == 0 && !status.stdout.contains("engine: pid"), "\(status.stdout)")
    }

    @Test func aMountPointThatCannotBeUsedIsOne() throws {
        let cli = CLIRunner()
        defer { cli.removeLibrary() }
        let missing = cli.library.appendingPathComponent("missing").path
        expectFailure(try cli.run("mount", missing), "mount point \(missing) does not exist (create it: mkdir -p")

        let full = cli.library.appendingPathComponent("full")
        try FileManager.default.createDirectory(at: full, withIntermediateDirectories: true)
        try Data("x".utf8).write(to: full.appendingPathComponent("file"))
        expectFailure(try cli.run("mount", full.path), "mount point \(full.path) is not empty")
        expectFailure(try cli.run("mount", full.appendingPathComponent("file").path), "is not a folder")

        expectFailure(try cli.run("unmount", full.path), "\(full.path) is not mounted (findmnt")
    }

    /// `offlinefs unmount` of another filesystem (a mistyped path) leaves it mounted.
    @Test(.enabled(if: getuid() == 0, "mounting a tmpfs needs root"))
    func unmountingAnotherFilesystemIsOne() throws {
        let cli = CLIRunner()
        defer { cli.removeLibrary() }
        let folder = cli.library.appendingPathComponent("tmpfs").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let mounted = try ChildProcess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", folder])
        try #require(mounted.status == 0, "\(mounted.stderr)")
        defer { _ = try? ChildProcess.run(["umount", "-l", folder]) }
        expectFailure(try cli.run("unmount", folder), "\(folder) is a tmpfs mount, not an offlinefs one: left mounted")
        #expect(MountTable.type(of: folder) == "tmpfs")
    }

    /// A library on a read-only filesystem: the error says so, not only SQLite's words.
    @Test(.enabled(if: getuid() == 0, "mounting a tmpfs needs root"))
    func aLibraryOnAReadOnlyFilesystemSaysSo() throws {
        let cli = CLIRunner()
        defer { cli.removeLibrary() }
        try cli.run("set", "cache-limit", "2G")
        let folder = cli.library.path + "-ro"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let mounted = try ChildProcess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", folder])
        try #require(mounted.status == 0, "\(mounted.stderr)")
        defer { _ = try? ChildProcess.run(["umount", "-l", folder]) }
        #expect(try ChildProcess.run(["cp", "-a", cli.library.path, folder + "/library"]).status == 0)
        #expect(try ChildProcess.run(["mount", "-o", "remount,ro", folder]).status == 0)
        expectFailure(try cli.run("set", "cache-limit", "1G", "--library", folder + "/library"), "it is on a read-only filesystem")
    }

    @Test func anUnknownItemOrSourceIsOne() throws {
        let cli = CLIRunner()
        defer { cli.removeLibrary() }
        try cli.run("set", "retry-limit", "3")
        let hint = "(offlinefs ls lists the items"
        expectFailure(try cli.run("download", "acme/nothing"), "no item 'acme/nothing' \(hint)")
        expectFailure(try cli.run("pause", "42"), "no item '42' \(hint)")
        expectFailure(try cli.run("evict", "sources/acme/None.mp4"), "no item 'sources/acme/None.mp4' \(hint)")
        let sources = "(offlinefs source list shows the sources)"
        expectFailure(try cli.run("sync", "nope"), "no source named 'nope' \(sources)")
        expectFailure(try cli.run("source", "remove", "nope"), "no source named 'nope' \(sources)")
        expectFailure(try cli.run("ls", "--source", "nope"), "no source named 'nope' \(sources)")
    }

    @Test func badSourcesAndPoliciesAreOne() throws {
        let cli = CLIRunner()
        defer { cli.removeLibrary() }
        expectFailure(try cli.run("source", "add", "acme", "ftp://example.com/feed"), "http:// or https://")
        try cli.run("source", "add", "acme", "http://127.0.0.1:1/catalog.json")
        expectFailure(try cli.run("source", "add", "acme", "http://127.0.0.1:1/other.json"),
                      "a source named 'acme' already exists (offlinefs source list")
        expectFailure(try cli.run("set", "no-such-policy", "1"), "unknown policy 'no-such-policy'")
        expectFailure(try cli.run("set", "cache-limit", "lots"), "invalid value 'lots' for cache-limit")
        expectFailure(try cli.run("set", "file-size-max", "-1"), "invalid value '-1' for file-size-max")
        expectFailure(try cli.run("get", "no-such-policy"), "unknown policy 'no-such-policy'")
    }

    @Test func aSyncFailureIsOne() throws {
        // Given a source whose origin does not answer (nothing listens on port 1)
        let cli = CLIRunner()
        defer { cli.removeLibrary() }
        try cli.run("source", "add", "dead", "http://127.0.0.1:1/catalog.json")

        expectFailure(try cli.run("sync"), "dead: sync failed:")
        expectFailure(try cli.run("sync", "dead"), "then run 'offlinefs sync dead' again)")
    }

    @Test func downloadWaitThatEndsNotCachedIsOne() throws {
        // Given a catalog whose only item's media is missing on the origin (404)
        let origin = try TestOrigin()
        defer { origin.stop() }
        let item = #"{"id": "gone", "title": "Gone", "url": "\#(origin.url("/gone.mp4"))", "type": "video/mp4"}"#
        let url = origin.serveFeed(path: "/catalog.json", json: #"{"offlinefs": 1, "items": [\#(item)]}"#)
        let cli = CLIRunner()
        defer { cli.removeLibrary() }
        try cli.run("source", "add", "acme", url)
        try cli.run("set", "retry-limit", "0")
        #expect(try cli.run("sync").status == 0)

        // When the user waits for it
        let output = try cli.run("download", "acme/gone", "--wait")

        // Then the status is 1, the item's line says why, and one Error line ends stderr
        // (stdout carries the progress lines: that is what --wait is for)
        #expect(output.status == 1, "\(output.stdout)\n\(output.stderr)")
        let lines = output.stderr.split(separator: "\n")
        #expect(lines.filter { $0.hasPrefix("Error: ") }.count == 1, "\(output.stderr)")
        #expect(lines.last?.hasPrefix("Error: 1 of 1 item(s) not downloaded") == true, "\(output.stderr)")
        #expect(output.stderr.contains("Gone"), "\(output.stderr)")
    }

    @Test func usageErrorsAreSixtyFour() throws {
        let cli = CLIRunner()
        defer { cli.removeLibrary() }
        expectUsageError(try cli.run("frobnicate"), "Unexpected argument 'frobnicate'")
        expectUsageError(try cli.run("ls", "--frobnicate"), "Unknown option '--frobnicate'")
        expectUsageError(try cli.run("set", "cache-limit"), "Missing expected argument '<value>'")
        expectUsageError(try cli.run("ls", "--state", "bogus"), "unknown state 'bogus'")
        expectUsageError(try cli.run("download", "acme/1", "--quality", "ultra"), "--quality takes low, medium, high")
        expectUsageError(try cli.run("download", "acme/1", "--partial", "abc"), "invalid for '--partial")
        expectUsageError(try cli.run("download", "acme/1", "--partial", "0"), "--partial takes a number of seconds")
        let mountpoint = cli.library.appendingPathComponent("mnt").path
        expectUsageError(try cli.run("mount", mountpoint, "-o", "read-timeout=soon"), "read-timeout")
        // An option only libfuse knows to refuse: its line names it, ours says where it came from.
        try FileManager.default.createDirectory(atPath: mountpoint, withIntermediateDirectories: true)
        let unknown = try cli.run("mount", mountpoint, "-o", "nonsense")
        #expect(unknown.status == 64 && unknown.stderr.contains("`-o nonsense'")
                && unknown.stderr.contains("Error: cannot mount on \(mountpoint): libfuse refused an option given with -o"),
                "status \(unknown.status): \(unknown.stderr)")
    }
}
