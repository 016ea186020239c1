import CSystemShim
import Foundation

/// Runs programs for tests and benchmarks with a deadline, so a hung mount fails a test instead of
/// hanging the run.
///
/// Uses `posix_spawnp` with an empty signal mask and default dispositions: the test runner's
/// threads block most signals, and Foundation's `Process` passes that mask on, so a child
/// would never see the SIGINT the interrupt test sends.
public enum ChildProcess {
    public struct Result {
        public var status: Int32
        /// The signal that ended the child, or `nil` for a normal exit.
        public var signal: Int32?
        public var stdout: String
        public var stderr: String
    }

    public struct Failed: Error, CustomStringConvertible {
        public var description: String
    }

    /// Runs `command` (looked up in PATH) to completion, killing it after `deadline` seconds.
    public static func run(_ command: [String], deadline: Double = 10) throws -> Result {
        let child = try start(command)
        guard child.wait(deadline: deadline) else {
            child.kill(SIGKILL)
            _ = child.wait(deadline: 5)
            throw Failed(description: "timed out: \(command.joined(separator: " "))")
        }
        return child.result()
    }

    /// Starts `command` and returns at once.
    public static func start(_ command: [String]) throws -> Running {
        try Running(command)
    }

    /// A started child process; its output goes to files (no pipe to drain).
    public final class Running {
        public let pid: pid_t
        private let outPath: String, errPath: String
        private var waitStatus: Int32?

        fileprivate init(_ command: [String]) throws {
            let base = NSTemporaryDirectory() + "offlinefs-child-\(UUID().uuidString)"
            outPath = base + ".out"
            errPath = base + ".err"

            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            // Nothing else of the test process's: its origins' and engines' sockets (libcurl's
            // are not close-on-exec) would count against a child's open-file limit.
            _ = csystem_spawn_close_from(&actions, 3)

            var attributes = posix_spawnattr_t()
            posix_spawnattr_init(&attributes)
            defer { posix_spawnattr_destroy(&attributes) }
            _ = csystem_spawn_default_signals(&attributes, 0)

            let argv = command.map { strdup($0) } + [nil]
            defer { argv.forEach { free($0) } }
            var pid = pid_t()
            let rc = posix_spawnp(&pid, command[0], &actions, &attributes, argv, environ)
            guard rc == 0 else { throw Failed(description: "cannot start \(command[0]): errno \(rc)") }
            self.pid = pid
        }

        deinit {
            if waitStatus == nil {
                Glibc.kill(pid, SIGKILL)
                _ = wait(deadline: 5)
            }
            unlink(outPath)
            unlink(errPath)
        }

        public func kill(_ signal: Int32) { _ = Glibc.kill(pid, signal) }

        /// What the child has written to stdout so far (it may still be running).
        public var currentOutput: String {
            String(decoding: FileManager.default.contents(atPath: outPath) ?? Data(), as: UTF8.self)
        }

        /// Waits for the exit, at most `deadline` seconds; `false` if still running.
        public func wait(deadline: Double) -> Bool {
            let end = Date().addingTimeInterval(deadline)
            while waitStatus == nil {
                var status: Int32 = 0
                let rc = waitpid(pid, &status, WNOHANG)
                if rc == pid { waitStatus = status; break }
                if rc < 0 && errno != EINTR { return false }
                if Date() >= end { return false }
                usleep(2_000)
            }
            return true
        }

        /// Status and output; call after `wait` returned `true`.
        public func result() -> Result {
            let status = waitStatus ?? -1
            let signaled = status & 0x7f != 0 && status & 0x7f != 0x7f
            let out = FileManager.default.contents(atPath: outPath) ?? Data()
            let err = FileManager.default.contents(atPath: errPath) ?? Data()
            return Result(status: (status >> 8) & 0xff, signal: signaled ? status & 0x7f : nil,
                          stdout: String(decoding: out, as: UTF8.self), stderr: String(decoding: err, as: UTF8.self))
        }
    }
}
