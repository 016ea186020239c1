public import Foundation
import Glibc

/// One engine per library at a time (DESIGN §5, rclone#2227): an exclusive `flock` on
/// `<library>/engine.lock`, which also holds the owner's pid. The kernel drops the lock when
/// the process dies, even by `kill -9`.
public final class EngineLock: Sendable {
    public static let fileName = "engine.lock"
    private let fd: Int32

    /// Another engine holds the lock: its pid and mount point as it wrote them.
    public struct Held: Error, CustomStringConvertible {
        public let pid: Int32?
        /// Where it mounted the library; nil for an engine without a mount (`download --wait`).
        public let mountpoint: String?

        public var description: String {
            let mountedOn = mountpoint.map { ", mounted on \($0)" } ?? ""
            let next = mountpoint.map { "unmount it first (offlinefs unmount \($0))" } ?? "wait for it to end, or stop it, and try again"
            return "another engine is running on this library (pid \(pid.map(String.init) ?? "unknown")\(mountedOn)); \(next)"
        }
    }

    /// Takes the lock, or throws `Held` naming the engine that holds it.
    public init(folder: URL) throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent(Self.fileName).path
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            let reason = String(cString: strerror(errno))
            // Another user's library, or one on a read-only disk: no engine needs to run for that.
            let hint = errno == EACCES || errno == EPERM ? " (the library belongs to another user: run offlinefs as its owner)"
                : errno == EROFS ? " (the library is on a read-only filesystem: commands that change it cannot run)" : ""
            throw EngineError.invalidArgument("cannot write \(path): \(reason)\(hint)")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            let holder = Self.holder(folder: folder)
            throw Held(pid: holder?.pid, mountpoint: holder?.mountpoint)
        }
        self.fd = fd
        record(mountpoint: nil)
    }

    /// Writes the holder's pid and, when mounted, the mount point into the lock file
    /// (again after a daemonizing fork, which changes the pid).
    public func record(mountpoint: String?) {
        var text = "\(getpid())\n"
        if let mountpoint {
            // No URL standardizing: resolving the path would stat the mount point, and a
            // mount process that stats its own mount before serving it deadlocks.
            let absolute = mountpoint.hasPrefix("/") ? mountpoint : FileManager.default.currentDirectoryPath + "/" + mountpoint
            text += absolute + "\n"
        }
        let bytes = Array(text.utf8)
        _ = ftruncate(fd, 0)
        _ = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
    }

    /// The engine running on the library now: the lock is held (its pid alone could name
    /// a process that ended unreaped, or another that took its number), with what it wrote.
    public static func running(folder: URL) -> (pid: Int32, mountpoint: String?)? {
        let fd = open(folder.appendingPathComponent(fileName).path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        guard flock(fd, LOCK_SH | LOCK_NB) != 0, errno == EWOULDBLOCK else { return nil }
        return holder(folder: folder)
    }

    /// The pid and mount point written by the engine holding the lock, if any.
    public static func holder(folder: URL) -> (pid: Int32, mountpoint: String?)? {
        let path = folder.appendingPathComponent(fileName).path
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        let lines = text.split(separator: "\n").map(String.init)
        guard let pid = lines.first.flatMap({ Int32($0) }) else { return nil }
        return (pid, lines.count > 1 ? lines[1] : nil)
    }

    deinit {
        close(fd)  // releases the flock
    }
}
