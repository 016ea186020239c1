import Foundation
import OfflineEngine
import OfflineStore

/// Follows the asked items of `download --wait` until each has ended, drawing progress bars
/// on a terminal (redrawn in place) or printing a line per change otherwise.
struct DownloadWatch {
    let engine: Engine
    let itemIDs: [Int64]
    let tty: Bool

    /// Returns the number of items that did not end `cached`.
    func run() -> Int {
        var meter = SpeedMeter(window: 3)
        var lastLines: [Int64: String] = [:]
        var lastPlain: [Int64: (state: String, time: Double)] = [:]
        var drawn = 0
        let start = Date()
        while true {
            let now = Date().timeIntervalSince(start)
            let items = itemIDs.compactMap { try? engine.store.item(id: $0) }
            var lines: [String] = []
            for item in items {
                let written = item.state == .downloading
                    ? max(item.bytesPresent, engine.transfers.fetcher.progress(itemID: item.id, file: "media").written)
                    : item.bytesPresent
                meter.record(item.id, bytes: written, at: now)
                let state = item.error.map { "\(item.state.rawValue): \($0.rawValue)" } ?? item.state.rawValue
                let line = progressLine(name: item.fileName ?? item.contentID, state: state, bytes: written, size: item.size,
                                        speed: item.state == .downloading ? meter.speed(item.id) : nil,
                                        eta: item.state == .downloading ? meter.eta(item.id, size: item.size) : nil)
                lines.append(line)
                if !tty {
                    // Plain output: a line when the state changes, and every 5 s while moving.
                    let previous = lastPlain[item.id]
                    if previous?.state != state || (item.state == .downloading && now - (previous?.time ?? 0) >= 5) {
                        print(line)
                        lastPlain[item.id] = (state, now)
                    }
                }
                lastLines[item.id] = line
            }
            if tty {
                var output = drawn > 0 ? "\u{1B}[\(drawn)A" : ""
                for line in lines { output += "\r\u{1B}[2K" + line + "\n" }
                FileHandle.standardOutput.write(Data(output.utf8))
                drawn = lines.count
            }
            fflush(nil)
            if items.count == itemIDs.count, items.allSatisfy(ended) { break }
            usleep(200_000)
        }
        var failures = 0
        for id in itemIDs {
            guard let item = try? engine.store.item(id: id) else { continue }
            if item.state != .cached {
                failures += 1
                let reason = [item.error?.rawValue, item.errorDetail].compactMap { $0 }.joined(separator: ": ")
                FileHandle.standardError.write(Data("\(item.fileName ?? item.contentID): \(item.state.rawValue)\(reason.isEmpty ? "" : " (\(reason))")\n".utf8))
            }
        }
        return failures
    }

    /// An item has ended when nothing more will happen without the user: cached, failed,
    /// stopped by the user, or waiting on a policy, space, or a network that stayed down
    /// through the retry budget.
    private func ended(_ item: Item) -> Bool {
        switch item.state {
        case .cached, .partiallyCached, .failed, .paused, .discovered, .deleted: return true
        case .idle:
            switch item.error {
            case .noNetwork, .timeout, .networkError, .httpError, .corrupted, .downloadFailed:
                let limit = (try? engine.store.policy(.retryLimit)) ?? 3
                return engine.scheduler.attempts(itemID: item.id) > limit
            default: return true
            }
        default: return false
        }
    }
}
