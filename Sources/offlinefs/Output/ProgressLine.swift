import Foundation
import OfflineEngine

/// One line of progress: `[#####.....]  42.0%  1.2 MiB/s  ETA 12s  name  (state)`.
func progressLine(name: String, state: String, bytes: Int64, size: Int64?, speed: Double?, eta: Double?, width: Int = 24) -> String {
    let fraction = size.map { $0 > 0 ? min(1, Double(bytes) / Double($0)) : (state == "cached" ? 1 : 0) } ?? 0
    let filled = Int((fraction * Double(width)).rounded(.down))
    let bar = "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "]"
    let percent = String(format: "%5.1f%%", fraction * 100)
    let rate = speed.map { formatBytes(Int64($0)) + "/s" } ?? "-"
    let left = eta.map(formatDuration) ?? "-"
    return "\(bar) \(percent) \(rate.padding(toLength: 12, withPad: " ", startingAt: 0)) ETA \(left.padding(toLength: 8, withPad: " ", startingAt: 0)) \(name) (\(state))"
}
