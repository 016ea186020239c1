import OfflineTestSupport
import OfflineFUSE
import Foundation
import Testing

/// `offlinefs mount -f` of a fixture's library, run as a child process (a process reading its
/// own FUSE mount can deadlock), optionally as another user through `setpriv`.
final class MountedLibrary {
    let fixture: LibraryFixture
    let daemon: ChildProcess.Running
    /// Prepended to commands run against the mount (`setpriv …` for another user).
    let prefix: [String]
    private var unmounted = false

    /// The `offlinefs` executable, built next to the test bundle.
    static var executable: String {
        let own = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        return URL(fileURLWithPath: own).deletingLastPathComponent().appendingPathComponent("offlinefs").path
    }

    static func asUser(_ uid: UInt32) -> [String] {
        ["setpriv", "--reuid=\(uid)", "--regid=\(uid)", "--clear-groups"]
    }

    init(_ fixture: LibraryFixture, options: [String] = [], prefix: [String] = []) throws {
        self.fixture = fixture
        self.prefix = prefix
        guard FileManager.default.isExecutableFile(atPath: Self.executable) else {
            throw Failure("offlinefs not built at \(Self.executable)")
        }
        let optionArguments = options.isEmpty ? [] : ["-o", options.joined(separator: ",")]
        daemon = try ChildProcess.start(prefix + [Self.executable, "mount", fixture.mountpoint, "-f",
                                                  "--library", fixture.libraryPath] + optionArguments)
        guard MountTable.wait(for: fixture.mountpoint, mounted: true, deadline: 10) else {
            daemon.kill(SIGTERM)
            let output = daemon.wait(deadline: 5) ? daemon.result().stderr : "(still running)"
            throw Failure("not mounted within 10 s: \(output)")
        }
    }

    /// Runs a program against the mount (as the mount's user when `prefix` says so).
    func run(_ command: [String], deadline: Double = 20) throws -> ChildProcess.Result {
        try ChildProcess.run(prefix + command, deadline: deadline)
    }

    /// `offlinefs unmount`, then waits for the daemon to exit.
    @discardableResult
    func unmount() throws -> (unmount: ChildProcess.Result, daemon: ChildProcess.Result) {
        unmounted = true
        let result = try ChildProcess.run([Self.executable, "unmount", fixture.mountpoint])
        guard daemon.wait(deadline: 10) else { throw Failure("daemon still running 10 s after unmount") }
        return (result, daemon.result())
    }

    /// After a failure: unmount lazily and kill the daemon.
    func cleanUp() {
        if !unmounted { _ = try? ChildProcess.run(["fusermount3", "-u", fixture.mountpoint]) }
        if MountTable.isMounted(fixture.mountpoint) { _ = try? ChildProcess.run(["umount", "-l", fixture.mountpoint]) }
        if !daemon.wait(deadline: 5) {
            daemon.kill(SIGKILL)
            _ = daemon.wait(deadline: 5)
        }
    }
}

/// Mounts, runs `body`, always unmounts; checks the unmount was clean and the daemon wrote no
/// error lines.
func withMount(_ fixture: LibraryFixture, options: [String] = [], prefix: [String] = [],
               _ body: (MountedLibrary) throws -> Void) throws {
    let mount = try MountedLibrary(fixture, options: options, prefix: prefix)
    defer { mount.cleanUp() }
    do {
        try body(mount)
    } catch {
        // What the daemon logged says why a request failed.
        let daemon = (try? mount.unmount())?.daemon.stderr ?? "(no daemon output)"
        throw Failure("\(error)\ndaemon output:\n\(daemon.suffix(4000))")
    }
    let (unmount, daemon) = try mount.unmount()
    #expect(unmount.status == 0, "unmount: \(unmount.stderr)")
    #expect(daemon.status == 0, "daemon exit: \(daemon.stderr)")
    #expect(!daemon.stderr.contains("error"), "daemon output: \(daemon.stderr)")
    #expect(!MountTable.isMounted(fixture.mountpoint))
}

/// `ls -ln --time-style=+%s` of a folder: name → (mode string, uid, size, mtime).
struct Listing {
    struct Line: Equatable {
        var mode: String
        var uid: UInt32
        var size: Int64
        var mtime: Int
    }
    var lines: [String: Line] = [:]

    init(_ output: String) {
        for row in output.split(separator: "\n") where !row.hasPrefix("total") {
            let fields = row.split(separator: " ", maxSplits: 6, omittingEmptySubsequences: true)
            guard fields.count == 7 else { continue }
            lines[String(fields[6])] = Line(mode: String(fields[0]), uid: UInt32(fields[2]) ?? .max,
                                            size: Int64(fields[4]) ?? -1, mtime: Int(fields[5]) ?? -1)
        }
    }

    var names: Set<String> { Set(lines.keys) }
}
