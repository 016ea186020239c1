import Foundation
import Glibc
import Testing

/// A mount in the background (no `-f`) logs to syslog: its messages must arrive there as text.
/// The mount runs in a mount namespace of its own whose `/dev/log` is a socket this test reads.
@Suite(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare"),
                "needs root and unshare(1)"))
struct MountLoggingTests {
    @Test func aBackgroundMountsLogLinesReachSyslogAsText() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("offlinefs-syslog-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder + "/mnt", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let socketPath = folder + "/log"
        let listener = try Self.datagramSocket(boundAt: socketPath)
        defer { close(listener) }
        // Given a namespace whose /dev holds only what the mount needs, and the test's socket as /dev/log
        let script = """
            set -e
            mount --make-rprivate /
            mount -t tmpfs tmpfs /dev
            mknod -m 666 /dev/null c 1 3
            mknod -m 666 /dev/fuse c 10 229
            touch /dev/log
            mount --bind "$1/log" /dev/log
            "$2" mount "$1/mnt" --library "$1/library"
            "$2" unmount "$1/mnt"
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        process.arguments = ["-m", "sh", "-c", script, "sh", folder, CLIRunner.executable.path]
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        // When a mount starts in the background and is unmounted
        try process.run()
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(stderr)")
        // Then syslog got its lines as text, naming what happened
        let lines = Self.datagrams(from: listener)
        #expect(lines.contains { $0.contains("offlinefs: mounted \(folder)/library on \(folder)/mnt") }, "\(lines)")
    }

    static func datagramSocket(boundAt path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard fd >= 0, bound == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        return fd
    }

    /// Every datagram waiting on the socket (the mount has ended: all it sent is there).
    static func datagrams(from fd: Int32) -> [String] {
        var lines: [String] = []
        var buffer = [UInt8](repeating: 0, count: 8192)
        while true {
            let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            guard count > 0 else { return lines }
            lines.append(String(decoding: buffer[0..<count], as: UTF8.self))
        }
    }
}
