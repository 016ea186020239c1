import Foundation

/// The kernel's mount table (`/proc/self/mountinfo`), read without touching any mount, so a
/// dead ("Transport endpoint is not connected") mount cannot hang or fail the check.
enum MountTable {
    /// Mount points and their filesystem types (`fuse.offlinefs`), unescaped.
    static func entries() -> [(mountpoint: String, type: String)] {
        guard let text = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            let halves = line.components(separatedBy: " - ")
            let fields = halves[0].split(separator: " ")
            guard fields.count > 4, halves.count > 1 else { return nil }
            let type = halves[1].split(separator: " ").first.map(String.init) ?? ""
            return (unescape(fields[4]), type)
        }
    }

    static func isMounted(_ path: String) -> Bool {
        entries().contains { $0.mountpoint == path }
    }

    /// An absolute path for `path` with its parent resolved (`realpath`), without touching the
    /// last component: stat of a dead mount fails.
    static func absolute(_ path: String) -> String {
        let url = URL(fileURLWithPath: path)
        let parent = url.deletingLastPathComponent().path
        let resolved = realpath(parent, nil).map { pointer in
            defer { free(pointer) }
            return String(cString: pointer)
        } ?? parent
        return resolved == "/" ? "/" + url.lastPathComponent : resolved + "/" + url.lastPathComponent
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
