import Foundation
import OfflineEngine
import OfflineFUSE
import Synchronization

// Lock order: `index` is a leaf; store reads happen outside it (a racing update only repeats
// work: lines are appended in sequence order and checked against the last one).

/// `.events`: the store's event log as JSON lines (`seq`, `time`, `kind`, `item`, `source`,
/// `message`, `details`), with a real size and mtime that grow as events arrive, so `tail -f`
/// (which polls `fstat` on FUSE) follows it (HARDENING: the exception to size 0).
///
/// Memory stays small however long the log: only each line's end offset is kept; a read
/// renders the lines it covers again from the store (`line(for:)` is deterministic).
final class EventsFile: Sendable {
    private struct Index {
        var seqs: [Int64] = []
        /// `ends[i]`: the byte just past line `i`.
        var ends: [Int64] = []
        var lastTime = Date(timeIntervalSince1970: 0)
        var size: Int64 { ends.last ?? 0 }
    }

    private let view: LibraryView
    private let index = Mutex(Index())  // protected: line offsets

    init(view: LibraryView) {
        self.view = view
    }

    /// Takes in the events logged since the last call; returns the size and the mtime.
    @discardableResult
    func update() -> (size: Int64, modified: Date) {
        while true {
            let last = index.withLock { $0.seqs.last ?? 0 }
            guard let events = try? view.events(after: last, limit: 5000), !events.isEmpty else { break }
            index.withLock { index in
                for event in events where event.seq > (index.seqs.last ?? 0) {
                    index.seqs.append(event.seq)
                    index.ends.append(index.size + Int64(Self.line(for: event).count))
                    index.lastTime = event.time
                }
            }
            if events.count < 5000 { break }
        }
        return index.withLock { ($0.size, $0.lastTime) }
    }

    /// `size` bytes from `offset` (fewer at the end of the log).
    func read(offset: Int64, size: Int) -> [UInt8] {
        let end = update().size
        guard offset >= 0, offset < end, size > 0 else { return [] }
        let (first, firstStart, count) = index.withLock { index -> (Int64, Int64, Int) in
            // The first line ending after `offset` (there is one: `offset` is before the end),
            // and how many lines cover the request.
            let low = index.ends.partitionPoint { $0 > offset }
            let start = low == 0 ? 0 : index.ends[low - 1]
            var last = low
            while last < index.ends.count - 1 && index.ends[last] < offset + Int64(size) { last += 1 }
            return (index.seqs[low], start, last - low + 1)
        }
        guard let events = try? view.events(after: first - 1, limit: count) else { return [] }
        var bytes: [UInt8] = []
        for event in events { bytes += Self.line(for: event) }
        let skip = Int(offset - firstStart)
        guard skip < bytes.count else { return [] }
        return Array(bytes[skip..<min(bytes.count, skip + size)])
    }

    /// One event as a JSON line; the same bytes every time for the same event.
    static func line(for event: StoreEvent) -> [UInt8] {
        var text = "{\"seq\":\(event.seq),\"time\":\(quote(event.time.formatted(timeFormat))),\"kind\":\(quote(event.kind.rawValue))"
        if let item = event.itemID { text += ",\"item\":\(item)" }
        if let source = event.sourceID { text += ",\"source\":\(source)" }
        text += ",\"message\":\(quote(event.message))"
        if let details = event.details {
            // Details are JSON text written by the engine; anything else is shown as a string.
            let valid = (try? JSONSerialization.jsonObject(with: Data(details.utf8), options: [.fragmentsAllowed])) != nil
            text += ",\"details\":" + (valid && !details.contains("\n") ? details : quote(details))
        }
        return Array((text + "}\n").utf8)
    }

    private static let timeFormat = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    static func quote(_ string: String) -> String {
        var result = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default:
                if scalar.value < 0x20 {
                    result += String(format: "\\u%04x", scalar.value)
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result + "\""
    }
}
