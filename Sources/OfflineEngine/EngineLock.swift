import Foundation
import Glibc

/// One engine per library at a time (DESIGN §5, rclone#2227): an exclusive `flock` on
/// `<library>/engine.lock`, which also holds the owner's pid. The kernel drops the lock when
/// the process dies, even by `kill -9`.
public final class EngineLock: Sendable {
    public static let fileName = "engine.lock"
    private let fd: Int32

    /// Takes the lock, or throws naming the pid that holds it.
    public init(folder: URL) throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent(Self.fileName).path
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw EngineError.invalidArgument("cannot open \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let holder = (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
            close(fd)
            throw EngineError.invalidArgument(
                "another engine is running on this library (pid \(holder?.isEmpty == false ? holder! : "unknown"))")
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        self.fd = fd
    }

    deinit {
        close(fd)  // releases the flock
    }
}
