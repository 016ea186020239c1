import Foundation

/// The kernel's mount table (`/proc/self/mountinfo`), read without touching any mount, so a
/// dead ("Transport endpoint is not connected") or slow mount cannot hang or fail the check.
public enum MountTable {
    /// Mount points and their filesystem types (`fuse.offlinefs`), unescaped.
    public static func entries() -> [(mountpoint: String, type: String)] {
        guard let text = readMountInfo() else { return [] }
        return text.split(separator: "\n").compactMap { line in
            let halves = line.components(separatedBy: " - ")
            let fields = halves[0].split(separator: " ")
            guard fields.count > 4, halves.count > 1 else { return nil }
            let type = halves[1].split(separator: " ").first.map(String.init) ?? ""
            return (unescape(fields[4]), type)
        }
    }

    /// The device number (`major:minor`) of the newest mount at `path`, from the table.
    public static func device(of path: String) -> (major: UInt32, minor: UInt32)? {
        guard let text = readMountInfo() else { return nil }
        var found: (UInt32, UInt32)?
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count > 4, unescape(fields[4]) == path else { continue }
            let numbers = fields[2].split(separator: ":").compactMap { UInt32($0) }
            if numbers.count == 2 { found = (numbers[0], numbers[1]) }
        }
        return found
    }

    /// The filesystem type of the newest mount at `path` (`fuse.offlinefs`), nil when none.
    public static func type(of path: String) -> String? {
        entries().last { $0.mountpoint == path }?.type
    }

    public static func isMounted(_ path: String) -> Bool {
        entries().contains { $0.mountpoint == path }
    }

    /// Polls until `isMounted(path) == mounted` or `deadline` seconds pass.
    public static func wait(for path: String, mounted: Bool, deadline: Double = 5) -> Bool {
        let end = Date().addingTimeInterval(deadline)
        while Date() < end {
            if isMounted(path) == mounted { return true }
            usleep(5_000)
        }
        return isMounted(path) == mounted
    }

    /// An absolute path for `path` with its parent resolved (`realpath`), without touching the
    /// last component: stat of a dead mount fails.
    public static func absolute(_ path: String) -> String {
        let url = URL(fileURLWithPath: path)
        let parent = url.deletingLastPathComponent().path
        let resolved = realpath(parent, nil).map { pointer in
            defer { free(pointer) }
            return String(cString: pointer)
        } ?? parent
        return resolved == "/" ? "/" + url.lastPathComponent : resolved + "/" + url.lastPathComponent
    }

    /// The whole file, read to its end: proc files report size 0, and a reader that trusts
    /// one page misses every mount past the first 4 KiB (the newest ones).
    private static func readMountInfo() -> String? {
        let fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var data = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            data.append(contentsOf: chunk[..<count])
        }
        return String(decoding: data, as: UTF8.self)
    }

    private static func unescape<S: StringProtocol>(_ field: S) -> String {
        var bytes: [UInt8] = []
        var rest = Array(field.utf8)[...]
        while let byte = rest.popFirst() {
            if byte == UInt8(ascii: "\\"), rest.count >= 3,
               let value = UInt8(String(decoding: rest.prefix(3), as: UTF8.self), radix: 8) {
                bytes.append(value)
                rest = rest.dropFirst(3)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
