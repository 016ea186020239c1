import OfflineTestSupport
import OfflineFUSE
import Foundation
import Testing

/// The `fuse-example` filesystem mounted by a child process (a process that accesses its own
/// FUSE mount can deadlock; PLATFORM-NOTES). Always unmounted by `withExampleMount`.
final class ExampleMount {
    let mountpoint: String
    /// The real file the example serves as `spliced.bin`.
    let spliceSource: String
    let spliceBytes: [UInt8]
    let daemon: ChildProcess.Running
    private let directory: String
    private var unmounted = false

    /// The example executable, built next to the test bundle.
    static var executable: String {
        let own = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        return URL(fileURLWithPath: own).deletingLastPathComponent().appendingPathComponent("fuse-example").path
    }

    init() throws {
        var template = Array("/tmp/offlinefuse-test-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw Failure("mkdtemp failed") }
        directory = String(cString: made)
        mountpoint = directory + "/mnt"
        spliceSource = directory + "/splice-source.bin"
        try FileManager.default.createDirectory(atPath: mountpoint, withIntermediateDirectories: false)
        // 300 KB of a fixed pattern: several read requests, and any offset mistake shows.
        spliceBytes = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }
        try Data(spliceBytes).write(to: URL(fileURLWithPath: spliceSource))
        guard FileManager.default.isExecutableFile(atPath: Self.executable) else {
            throw Failure("fuse-example not built at \(Self.executable)")
        }
        daemon = try ChildProcess.start([Self.executable, mountpoint, spliceSource])
        guard MountTable.wait(for: mountpoint, mounted: true) else {
            daemon.kill(SIGTERM)
            let output = daemon.wait(deadline: 5) ? daemon.result().stderr : "(still running)"
            throw Failure("not mounted within 5 s: \(output)")
        }
    }

    func path(_ relative: String) -> String { mountpoint + "/" + relative }

    /// Unmounts with `fusermount3 -u` and waits for the daemon to exit; returns what happened.
    @discardableResult
    func unmount() throws -> (fusermount: ChildProcess.Result, daemon: ChildProcess.Result) {
        unmounted = true
        let fusermount = try ChildProcess.run(["fusermount3", "-u", mountpoint])
        guard daemon.wait(deadline: 5) else { throw Failure("daemon still running 5 s after unmount") }
        return (fusermount, daemon.result())
    }

    /// Last resort after a failure: lazy unmount, kill the daemon, remove the folder.
    func cleanUp() {
        if !unmounted {
            _ = try? ChildProcess.run(["fusermount3", "-u", mountpoint])
        }
        if MountTable.isMounted(mountpoint) { _ = try? ChildProcess.run(["umount", "-l", mountpoint]) }
        if !daemon.wait(deadline: 5) {
            daemon.kill(SIGKILL)
            _ = daemon.wait(deadline: 5)
        }
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// Mounts the example, runs `body`, and always unmounts.
func withExampleMount(_ body: (ExampleMount) throws -> Void) throws {
    let mount = try ExampleMount()
    defer { mount.cleanUp() }
    try body(mount)
}

struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

