#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// What this machine offers the tests that mount: conditions for `.enabled(if:)`.
public enum FUSEAvailability {
    /// Whether `/dev/fuse` is the FUSE device (character device 10:229) and opens: in a
    /// sandbox it may be missing, or another device (`/dev/null`) bound over it.
    public static let hasDevFuse: Bool = {
        var info = stat()
        guard stat("/dev/fuse", &info) == 0, info.st_mode & S_IFMT == S_IFCHR,
              (info.st_rdev >> 8) & 0xfff == 10, (info.st_rdev & 0xff) | ((info.st_rdev >> 12) & 0xfff00) == 229 else { return false }
        let fd = open("/dev/fuse", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { return false }
        close(fd)
        return true
    }()
    public static let hasFusermount = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        .split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/fusermount3") }
    public static let isRoot = getuid() == 0

    /// FUSE passthrough: kernel 6.9 or later, and root (registering a backing file needs
    /// `CAP_SYS_ADMIN`).
    public static let hasPassthrough: Bool = {
        var name = utsname()
        guard isRoot, uname(&name) == 0 else { return false }
        let release = withUnsafeBytes(of: name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let numbers = release.split(whereSeparator: { !$0.isNumber }).prefix(2).compactMap { Int($0) }
        return numbers.count == 2 && (numbers[0], numbers[1]) >= (6, 9)
    }()
}
