#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// What this machine offers the tests that mount: conditions for `.enabled(if:)`.
public enum FUSEAvailability {
    public static let hasDevFuse = FileManager.default.fileExists(atPath: "/dev/fuse")
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
