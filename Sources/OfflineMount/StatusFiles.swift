public import Foundation
public import OfflineEngine
import Synchronization

/// `.status` (a table a person reads) and `.status.json` (the same for scripts): pure
/// renderers of the items and their measured speeds. Every item that is not `discovered` or
/// `deleted` is listed, busiest states first.
public enum StatusFiles {
    /// One item with its speed (bytes per second, measured between renders) and ETA.
    public struct Row: Sendable, Equatable {
        public var item: ItemSummary
        public var speed: Double?
        public var etaSeconds: Double?

        public init(item: ItemSummary, speed: Double?) {
            self.item = item
            self.speed = item.state == "downloading" ? speed : nil
            if let speed = self.speed, speed > 0, let size = item.size, size > item.bytes {
                etaSeconds = (Double(size - item.bytes) / speed).rounded(.up)
            }
        }
    }

    static let stateOrder = ["downloading", "queued", "metadata-pending", "idle", "paused", "failed", "partially-cached", "cached"]

    /// The rows shown, in order: by state (`stateOrder`), then path.
    public static func rows(_ items: [ItemSummary], speeds: [Int64: Double]) -> [Row] {
        items.filter { $0.state != "discovered" && $0.state != "deleted" }
            .sorted { a, b in
                let ra = stateOrder.firstIndex(of: a.state) ?? stateOrder.count
                let rb = stateOrder.firstIndex(of: b.state) ?? stateOrder.count
                return ra != rb ? ra < rb : a.path < b.path
            }
            .map { Row(item: $0, speed: speeds[$0.id]) }
    }

    /// `.status`: a summary line, then STATE PROGRESS SIZE SPEED ETA ITEM (ERROR).
    public static func table(_ rows: [Row], now: Date) -> String {
        var counts: [String: Int] = [:]
        for row in rows { counts[row.item.state, default: 0] += 1 }
        let summary = stateOrder.compactMap { state in counts[state].map { "\($0) \(state)" } }.joined(separator: ", ")
        let total = rows.compactMap(\.speed).reduce(0, +)
        var text = "offlinefs status at \(now.formatted(.iso8601)): "
            + (rows.isEmpty ? "nothing requested" : summary)
            + (total > 0 ? "; \(formatBytes(total))/s" : "") + "\n"
        guard !rows.isEmpty else { return text }
        var lines = [["STATE", "PROGRESS", "SIZE", "SPEED", "ETA", "ITEM"]]
        for row in rows {
            let item = row.item
            let progress = item.progressText
            var name = item.path
            if let error = item.error { name += " (\(error))" }
            lines.append([
                item.state, progress, item.size.map { item.sizeMark + formatBytes(Double($0)) } ?? "?",
                row.speed.map { formatBytes($0) + "/s" } ?? "-", row.etaSeconds.map(formatDuration) ?? "-", name,
            ])
        }
        let widths = (0..<5).map { column in lines.map { $0[column].count }.max() ?? 0 }
        for line in lines {
            var cells: [String] = []
            for column in 0..<5 {
                let cell = line[column]
                let pad = String(repeating: " ", count: widths[column] - cell.count)
                // Numbers right-aligned, words left-aligned.
                cells.append(column == 0 ? cell + pad : pad + cell)
            }
            text += cells.joined(separator: "  ") + "  " + line[5] + "\n"
        }
        return text
    }

    /// `.status.json`: `{"time": …, "items": [ItemSummary + speed + eta]}`.
    public static func json(_ rows: [Row], now: Date) -> [UInt8] {
        struct Item: Encodable {
            var summary: ItemSummary
            var speed: Double?
            var eta: Double?
            func encode(to encoder: any Encoder) throws {
                try summary.encode(to: encoder)
                var container = encoder.container(keyedBy: Key.self)
                try container.encode(speed, forKey: .speed)
                try container.encode(eta, forKey: .eta)
            }
            enum Key: String, CodingKey { case speed, eta }
        }
        struct Document: Encodable {
            var time: Date
            var items: [Item]
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        let document = Document(time: now, items: rows.map { Item(summary: $0.item, speed: $0.speed, eta: $0.etaSeconds) })
        guard let data = try? encoder.encode(document) else { return Array("{\"items\":[]}\n".utf8) }
        return Array(data) + [UInt8(ascii: "\n")]
    }

    public static func formatBytes(_ bytes: Double) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = bytes
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(Int(value)) B" : String(format: "%.1f %@", value, units[unit])
    }

    public static func formatDuration(_ seconds: Double) -> String {
        let total = Int(seconds)
        if total >= 3600 { return String(format: "%dh%02dm", total / 3600, total % 3600 / 60) }
        if total >= 60 { return String(format: "%dm%02ds", total / 60, total % 60) }
        return "\(total)s"
    }
}

// Lock order: `samples` is a leaf.

/// Download speeds measured from the bytes each render sees: (bytes now − bytes then) / time,
/// over the samples of the last `window` seconds.
final class RateMeter: Sendable {
    private let window: Double
    private let samples = Mutex<[Int64: [(time: Double, bytes: Int64)]]>([:])  // protected: item → recent samples

    init(window: Double = 10) {
        self.window = window
    }

    /// Records the bytes of each item at `now` and returns the speeds it can tell.
    func sample(_ items: [ItemSummary], now: Date) -> [Int64: Double] {
        let t = now.timeIntervalSince1970
        return samples.withLock { samples in
            var speeds: [Int64: Double] = [:]
            var kept: [Int64: [(time: Double, bytes: Int64)]] = [:]
            for item in items where item.state == "downloading" {
                var list = (samples[item.id] ?? []).filter { t - $0.time <= window && $0.bytes <= item.bytes }
                if let first = list.first, t - first.time >= 0.5 {
                    speeds[item.id] = Double(item.bytes - first.bytes) / (t - first.time)
                }
                list.append((t, item.bytes))
                kept[item.id] = list
            }
            samples = kept
            return speeds
        }
    }
}

/// The texts of open `.status` and `.status.json` files, and the latest snapshot of each: a
/// `getattr` takes one and reports its size, and an open within `reuseFor` serves the same
/// bytes, so a copier that reads exactly `st_size` bytes gets the whole file.
struct StatusSnapshots {
    static let reuseFor: Duration = .seconds(1)

    private var next: UInt64 = 1
    private var openTexts: [UInt64: [UInt8]] = [:]
    private var latest: [Bool: (taken: ContinuousClock.Instant, contents: [UInt8])] = [:]

    /// The snapshot of `.status.json` (json) or `.status` taken within `reuseFor`, if any.
    func latest(json: Bool) -> [UInt8]? {
        guard let snapshot = latest[json], ContinuousClock.now - snapshot.taken < Self.reuseFor else { return nil }
        return snapshot.contents
    }

    mutating func keep(_ contents: [UInt8], json: Bool) {
        latest[json] = (.now, contents)
    }

    /// A handle for an open file that reads `contents`.
    mutating func open(_ contents: [UInt8]) -> UInt64 {
        defer { next += 1 }
        openTexts[next] = contents
        return next
    }

    func contents(_ handle: UInt64) -> [UInt8] {
        openTexts[handle] ?? []
    }

    mutating func close(_ handle: UInt64) {
        openTexts[handle] = nil
    }
}
