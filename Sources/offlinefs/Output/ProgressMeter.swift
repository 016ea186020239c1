import Foundation

/// Speed and ETA of items from successive byte counts (smoothed: a speed over the last few
/// seconds, not since the start).
struct ProgressMeter {
    private var samples: [Int64: [(time: Double, bytes: Int64)]] = [:]
    private let window: Double = 3

    mutating func record(_ id: Int64, bytes: Int64, at time: Double) {
        var list = samples[id, default: []]
        if let last = list.last, bytes < last.bytes { list = [] }  // discarded bytes: start over
        list.append((time, bytes))
        while let first = list.first, time - first.time > window, list.count > 2 { list.removeFirst() }
        samples[id] = list
    }

    /// Bytes per second (nil before two samples).
    func speed(_ id: Int64) -> Double? {
        guard let list = samples[id], let first = list.first, let last = list.last, last.time > first.time else { return nil }
        return Double(last.bytes - first.bytes) / (last.time - first.time)
    }

    /// Seconds left at the current speed (nil when unknown or stalled).
    func eta(_ id: Int64, size: Int64?) -> Double? {
        guard let size, let speed = speed(id), speed > 0, let bytes = samples[id]?.last?.bytes else { return nil }
        return Double(max(0, size - bytes)) / speed
    }
}

/// One line of progress: `[#####.....]  42.0%  1.2 MiB/s  ETA 0:12  name  (state)`.
func progressLine(name: String, state: String, bytes: Int64, size: Int64?, speed: Double?, eta: Double?, width: Int = 24) -> String {
    let fraction = size.map { $0 > 0 ? min(1, Double(bytes) / Double($0)) : (state == "cached" ? 1 : 0) } ?? 0
    let filled = Int((fraction * Double(width)).rounded(.down))
    let bar = "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "]"
    let percent = String(format: "%5.1f%%", fraction * 100)
    let rate = speed.map { formatBytes(Int64($0)) + "/s" } ?? "-"
    let left = eta.map(formatDuration) ?? "-"
    return "\(bar) \(percent) \(rate.padding(toLength: 12, withPad: " ", startingAt: 0)) ETA \(left.padding(toLength: 8, withPad: " ", startingAt: 0)) \(name) (\(state))"
}

func formatDuration(_ seconds: Double) -> String {
    let total = Int(seconds.rounded())
    let (h, m, s) = (total / 3600, (total % 3600) / 60, total % 60)
    return h > 0 ? String(format: "%d:%02d:%02d", h, m, s) : String(format: "%d:%02d", m, s)
}
