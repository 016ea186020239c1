import Foundation

/// Reads the mount table (`/proc/self/mountinfo`): never touches the mount itself, so it
/// cannot hang on a dead or slow filesystem.
enum MountTable {
    /// The mount points listed now, unescaped (`\040` is a space).
    static func mountPoints() -> Set<String> {
        guard let text = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8) else { return [] }
        return Set(text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            return fields.count > 4 ? unescape(fields[4]) : nil
        })
    }

    static func isMounted(_ path: String) -> Bool { mountPoints().contains(path) }

    /// Polls until `isMounted(path) == mounted` or `deadline` seconds pass.
    static func wait(for path: String, mounted: Bool, deadline: Double = 5) -> Bool {
        let end = Date().addingTimeInterval(deadline)
        while Date() < end {
            if isMounted(path) == mounted { return true }
            usleep(5_000)
        }
        return isMounted(path) == mounted
    }

    private static func unescape(_ field: Substring) -> String {
        var bytes: [UInt8] = []
        var iterator = Array(field.utf8)[...]
        while let byte = iterator.popFirst() {
            if byte == UInt8(ascii: "\\"), iterator.count >= 3,
               let value = UInt8(String(decoding: iterator.prefix(3), as: UTF8.self), radix: 8) {
                bytes.append(value)
                iterator = iterator.dropFirst(3)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
