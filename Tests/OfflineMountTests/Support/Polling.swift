import Foundation
import OfflineStore

/// Polls `condition` every 10 ms until it holds or `deadline` seconds pass; returns whether it
/// held. A condition that throws has not held yet: a name may be missing until the tree's next
/// rebuild, a state until the store's next poll. Tests wait for effects this way instead of
/// sleeping a fixed time.
func eventually(within deadline: Double = 10, _ condition: () throws -> Bool) -> Bool {
    let end = Date().addingTimeInterval(deadline)
    repeat {
        if (try? condition()) == true { return true }
        usleep(10_000)
    } while Date() < end
    return false
}

extension LibraryFixture {
    /// A download window that excludes the present hour, so requested items stay queued/idle
    /// while a test looks at them.
    static var closedWindow: String {
        let hour = Calendar.current.component(.hour, from: Date())
        return String(format: "%02d:00-%02d:00", (hour + 2) % 24, (hour + 3) % 24)
    }

    /// The item now, read from the store (which the mount's process changes).
    func current(_ item: Item) throws -> Item {
        guard let now = try store.item(id: item.id) else { throw Failure("item \(item.id) gone") }
        return now
    }

    /// Writes `text` to the mount's `.control` in one `write`; the errno on failure.
    func control(_ text: String) -> Int32? {
        let fd = open(path(".control"), O_WRONLY | O_TRUNC)
        guard fd >= 0 else { return errno }
        let bytes = Array(text.utf8)
        let written = write(fd, bytes, bytes.count)
        let writeErrno = written < 0 ? errno : 0
        let closed = close(fd)
        let closeErrno = closed < 0 ? errno : 0
        if writeErrno != 0 { return writeErrno }
        return closeErrno != 0 ? closeErrno : nil
    }

    /// The `.events` lines, parsed.
    func eventLines() throws -> [[String: Any]] {
        try Self.eventLines(FileManager.default.contents(atPath: path(".events")) ?? Data())
    }

    /// The `.events` lines of `mount`, parsed.
    func eventLines(_ mount: any LibraryMount) throws -> [[String: Any]] {
        try Self.eventLines(Data(try mount.contents(".events")))
    }

    private static func eventLines(_ data: Data) throws -> [[String: Any]] {
        let text = String(decoding: data, as: UTF8.self)
        return try text.split(separator: "\n").map { line in
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                throw Failure("not a JSON object: \(line)")
            }
            return object
        }
    }
}
