public import Foundation

/// What `.status`, `.status.json` and `offlinefs status` show: every item that is not
/// `discovered` or `deleted`, busiest states first, with the speed and time left of those
/// downloading. One renderer, so the mount's files and the command agree.
public enum StatusReport {
    static let stateOrder = ["downloading", "queued", "metadata-pending", "idle", "paused", "failed", "partially-cached", "cached"]

    /// The items shown, in order: by state (`stateOrder`), then path. Downloading items get
    /// their speed and time left from `meter`, which records them at `time` (seconds on any
    /// steady clock) and forgets every other item.
    public static func rows(_ items: [ItemSummary], meter: inout SpeedMeter, at time: Double) -> [ItemSummary] {
        let downloading = items.filter { $0.state == "downloading" }
        for item in downloading { meter.record(item.id, bytes: item.bytes, at: time) }
        meter.keepOnly(Set(downloading.map(\.id)))
        return rows(items, speeds: meter)
    }

    /// The same, with the speeds `meter` measured elsewhere (the engine's, `ProgressEvents`).
    public static func rows(_ items: [ItemSummary], speeds meter: SpeedMeter) -> [ItemSummary] {
        items.filter { $0.state != "discovered" && $0.state != "deleted" }
            .sorted { a, b in
                let ra = stateOrder.firstIndex(of: a.state) ?? stateOrder.count
                let rb = stateOrder.firstIndex(of: b.state) ?? stateOrder.count
                return ra != rb ? ra < rb : a.path < b.path
            }
            .map { item in
                guard item.state == "downloading" else { return item }
                var item = item
                item.speed = meter.speed(item.id)
                item.eta = meter.eta(item.id, size: item.size)
                return item
            }
    }

    /// `.status` and `offlinefs status`: a summary line, then STATE PROGRESS SIZE SPEED ETA
    /// ITEM (ERROR), numbers right-aligned.
    public static func table(_ rows: [ItemSummary], now: Date) -> String {
        var counts: [String: Int] = [:]
        for row in rows { counts[row.state, default: 0] += 1 }
        let summary = stateOrder.compactMap { state in counts[state].map { "\($0) \(state)" } }.joined(separator: ", ")
        let total = rows.compactMap(\.speed).reduce(0, +)
        var text = "offlinefs status at \(now.formatted(.iso8601)): "
            + (rows.isEmpty ? "nothing requested" : summary)
            + (total > 0 ? "; \(formatBytes(Int64(total)))/s" : "") + "\n"
        guard !rows.isEmpty else { return text }
        var lines = [["STATE", "PROGRESS", "SIZE", "SPEED", "ETA", "ITEM"]]
        for item in rows {
            // An item with no file yet (its lookup pending) has no path: shown by its id.
            var name = item.path.isEmpty ? "\(item.source)/\(item.fileName)" : item.path
            if let error = item.error { name += " (\(error))" }
            lines.append([
                item.state, item.progressText, item.size.map { item.sizeMark + formatBytes($0) } ?? "?",
                item.speed.map { formatBytes(Int64($0)) + "/s" } ?? "-", item.eta.map(formatDuration) ?? "-", name,
            ])
        }
        let widths = (0..<5).map { column in lines.map { $0[column].count }.max() ?? 0 }
        for line in lines {
            let cells = (0..<5).map { column in
                let pad = String(repeating: " ", count: widths[column] - line[column].count)
                return column == 0 ? line[column] + pad : pad + line[column]
            }
            text += cells.joined(separator: "  ") + "  " + line[5] + "\n"
        }
        return text
    }

    /// `.status.json`: `{"time": …, "items": [ItemSummary]}`.
    public static func json(_ rows: [ItemSummary], now: Date) -> [UInt8] {
        struct Document: Encodable {
            var time: Date
            var items: [ItemSummary]
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        guard let data = try? encoder.encode(Document(time: now, items: rows)) else { return Array("{\"items\":[]}\n".utf8) }
        return Array(data) + [UInt8(ascii: "\n")]
    }
}

/// Download speeds from successive byte counts: the bytes gained over the samples of the last
/// `window` seconds, so a speed follows changes instead of averaging since the start.
public struct SpeedMeter: Sendable {
    private var samples: [Int64: [(time: Double, bytes: Int64)]] = [:]
    private let window: Double

    public init(window: Double = 5) {
        self.window = window
    }

    public mutating func record(_ id: Int64, bytes: Int64, at time: Double) {
        var list = samples[id, default: []]
        if let last = list.last, bytes < last.bytes { list = [] }  // bytes discarded: start over
        list.append((time, bytes))
        while let first = list.first, time - first.time > window, list.count > 2 { list.removeFirst() }
        samples[id] = list
    }

    /// Bytes per second; nil until two samples 0.2 s apart (two renders at once tell nothing).
    public func speed(_ id: Int64) -> Double? {
        guard let list = samples[id], let first = list.first, let last = list.last, last.time - first.time >= 0.2 else {
            return nil
        }
        return Double(last.bytes - first.bytes) / (last.time - first.time)
    }

    /// Seconds left at the current speed (nil when unknown or stalled).
    public func eta(_ id: Int64, size: Int64?) -> Double? {
        guard let size, let speed = speed(id), speed > 0, let bytes = samples[id]?.last?.bytes else { return nil }
        return (Double(max(0, size - bytes)) / speed).rounded(.up)
    }

    /// Forgets every item but `ids` (a mount measures for weeks).
    public mutating func keepOnly(_ ids: Set<Int64>) {
        samples = samples.filter { ids.contains($0.key) }
    }
}

/// Sizes as people read them: 1 KiB = 1024 bytes, one decimal.
public func formatBytes(_ bytes: Int64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"]
    var value = Double(bytes)
    var unit = 0
    while value >= 1024 && unit < units.count - 1 {
        value /= 1024
        unit += 1
    }
    return unit == 0 ? "\(bytes) B" : String(format: "%.1f", value) + " " + units[unit]
}

/// A time left: `42s`, `8m09s`, `1h02m`.
public func formatDuration(_ seconds: Double) -> String {
    let total = Int(seconds.rounded(.up))
    if total >= 3600 { return String(format: "%dh%02dm", total / 3600, total % 3600 / 60) }
    if total >= 60 { return String(format: "%dm%02ds", total / 60, total % 60) }
    return "\(total)s"
}
