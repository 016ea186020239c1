import Foundation
import Synchronization

/// Detaches the mount from the terminal as `fuse_daemonize` does (fork, new session,
/// `chdir("/")`, stdio to `/dev/null`), except that the foreground process stays until the
/// daemon says the library is served, or why it is not: the mount opens the library, mounts
/// and checks it in the daemon, and `offlinefs mount` must still end with status 1 (or 64)
/// and the reason when that fails. The daemon's stderr stays the terminal's until then, so
/// libfuse's own complaints reach the user.
///
/// Call with no thread running besides the caller's (`fork` with threads running can hang).
enum Detach {
    /// The daemon's end of the pipe the foreground process waits on.
    final class Readiness: Sendable {
        private let descriptor: Int32
        private let reported = Atomic<Bool>(false)

        fileprivate init(descriptor: Int32) { self.descriptor = descriptor }

        /// The library is served: the foreground process exits 0.
        func ready() { send("ok\n") }

        /// The mount gives up: the foreground process prints `message` and exits `status`.
        func failed(_ message: String, status: Int32 = 1) { send("error \(status) " + message + "\n") }

        /// Once: what follows (a mount that ends later) is the system log's.
        private func send(_ text: String) {
            guard !reported.exchange(true, ordering: .acquiringAndReleasing) else { return }
            var bytes = Array(text.utf8)[...]
            while !bytes.isEmpty {
                let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { break }  // the foreground process is gone: nobody to tell
                bytes = bytes.dropFirst(written)
            }
            close(descriptor)
            Detach.silenceStandardStreams()
        }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// In the daemon: returns the handle to report readiness with. The foreground process
    /// never returns from here: it waits for that report and exits.
    static func detach() throws -> Readiness {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw Failure(description: "pipe: \(String(cString: strerror(errno)))") }
        let (readEnd, writeEnd) = (ends[0], ends[1])
        // Close-on-exec: fusermount3, left running to unmount if the mount dies, must not hold
        // the daemon's end open (the foreground process waits for the end of the pipe).
        _ = fcntl(writeEnd, F_SETFD, FD_CLOEXEC)
        switch fork() {
        case -1:
            throw Failure(description: "fork: \(String(cString: strerror(errno)))")
        case 0:
            close(readEnd)
            guard setsid() != -1 else { throw Failure(description: "setsid: \(String(cString: strerror(errno)))") }
            _ = chdir("/")
            let null = open("/dev/null", O_RDONLY)
            if null >= 0 {
                dup2(null, STDIN_FILENO)
                if null != STDIN_FILENO { close(null) }
            }
            return Readiness(descriptor: writeEnd)
        default:
            close(writeEnd)
            waitForDaemon(readEnd)
        }
    }

    /// The daemon's stdout and stderr to `/dev/null` once the foreground process is gone.
    fileprivate static func silenceStandardStreams() {
        let null = open("/dev/null", O_RDWR)
        guard null >= 0 else { return }
        for standard in [STDOUT_FILENO, STDERR_FILENO] { dup2(null, standard) }
        if null > STDERR_FILENO { close(null) }
    }

    /// The foreground process: `_exit`, not `exit`, so that no cleanup of the session it
    /// shares with the daemon (unmounting) runs here.
    private static func waitForDaemon(_ descriptor: Int32) -> Never {
        var report: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            report += buffer[..<count]
        }
        let text = String(decoding: report, as: UTF8.self).trimmingCharacters(in: .newlines)
        if text == "ok" { _exit(0) }
        // "error STATUS MESSAGE"
        let fields = text.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        let status = fields.count == 3 && fields[0] == "error" ? Int32(fields[1]) : nil
        let reason = status != nil ? String(fields[2])
            : "the mount process ended before the library was served (see the system log)"
        FileHandle.standardError.write(Data("Error: \(reason)\n".utf8))
        _exit(status ?? 1)
    }
}
