import Foundation
import OfflineEngine
import OfflineStore

/// Follows the asked items of `download --wait` until each has ended, drawing progress bars
/// on a terminal (redrawn in place) or printing a line per change otherwise: the items of
/// an engine in this process, or of a mounted one (read from the store).
struct DownloadWatch {
    let itemIDs: [Int64]
    let tty: Bool
    /// The item now (nil: gone).
    let item: (Int64) -> Item?
    /// The bytes of a downloading item written so far (the store's count waits for a flush).
    var written: (Item) -> Int64 = \.bytesPresent
    /// The item's failed downloads on a network error in a row (nil: counted from the
    /// states the watch sees, for an engine in another process).
    var attempts: ((Int64) -> Int)?
    let retryLimit: Int
    /// Whether the engine doing the downloads still runs (a mount's may end first).
    var engineRuns: () -> Bool = { true }

    /// Follows the downloads of `engine`, which runs in this process.
    init(engine: Engine, itemIDs: [Int64], tty: Bool) {
        self.itemIDs = itemIDs
        self.tty = tty
        item = { try? engine.store.item(id: $0) }
        written = { max($0.bytesPresent, engine.transfers.fetcher.progress(itemID: $0.id, file: "media").written) }
        attempts = { engine.scheduler.attempts(itemID: $0) }
        retryLimit = (try? engine.store.policy(.retryLimit)) ?? 3
    }

    /// Follows the downloads of a mounted engine through `store`, until that mount ends.
    init(store: LibraryStore, library: URL, itemIDs: [Int64], tty: Bool) {
        self.itemIDs = itemIDs
        self.tty = tty
        item = { try? store.item(id: $0) }
        retryLimit = (try? store.policy(.retryLimit)) ?? 3
        engineRuns = { RunningMount.controlFile(for: library) != nil }
    }

    /// Returns the number of items that did not end `cached`.
    func run() -> Int {
        var meter = SpeedMeter(window: 3)
        var lastPlain: [Int64: (state: String, time: Double)] = [:]
        var drawn = 0
        var seenRetrying: [Int64: Int] = [:]
        var lastStates: [Int64: String] = [:]
        let start = Date()
        while true {
            let now = Date().timeIntervalSince(start)
            let items = itemIDs.compactMap(item)
            var lines: [String] = []
            for item in items {
                let written = item.state == .downloading ? written(item) : item.bytesPresent
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
                if lastStates[item.id] != state, Self.isRetrying(item) {
                    seenRetrying[item.id, default: 0] += 1
                }
                lastStates[item.id] = state
            }
            if tty {
                var output = drawn > 0 ? "\u{1B}[\(drawn)A" : ""
                for line in lines { output += "\r\u{1B}[2K" + line + "\n" }
                FileHandle.standardOutput.write(Data(output.utf8))
                drawn = lines.count
            }
            fflush(nil)
            if items.count == itemIDs.count, items.allSatisfy({ ended($0, retries: seenRetrying[$0.id] ?? 0) }) { break }
            guard engineRuns() else {
                FileHandle.standardError.write(Data("the mount's engine ended before the downloads did; 'offlinefs mount' or 'offlinefs download --wait' goes on with them\n".utf8))
                break
            }
            usleep(200_000)
        }
        var failures = 0
        for id in itemIDs {
            guard let item = item(id) else { continue }
            // A part asked for (`--partial`) ends `partially-cached`.
            if item.state != .cached && item.state != .partiallyCached {
                failures += 1
                let reason = [item.error?.rawValue, item.errorDetail].compactMap { $0 }.joined(separator: ": ")
                FileHandle.standardError.write(Data("\(item.fileName ?? item.contentID): \(item.state.rawValue)\(reason.isEmpty ? "" : " (\(reason))")\n".utf8))
            }
        }
        return failures
    }

    /// An item has ended when nothing more will happen without the user: cached, failed,
    /// stopped by the user, or waiting on a policy, space, or a network that stayed down
    /// through the retry budget (`retries`: the times the watch saw it start waiting).
    private func ended(_ item: Item, retries: Int) -> Bool {
        switch item.state {
        case .cached, .partiallyCached, .failed, .paused, .discovered, .deleted: return true
        case .idle: return !Self.isRetrying(item) || (attempts?(item.id) ?? Self.retryNumber(item) ?? retries) > retryLimit
        default: return false
        }
    }

    /// The back-off an idle item waits in, as the engine wrote it (`… (retry 3)`): a mount's
    /// engine goes from `downloading` to `idle` in milliseconds, between two looks of the
    /// watch, which then saw two of eight and waited for good.
    static func retryNumber(_ item: Item) -> Int? {
        guard let detail = item.errorDetail, detail.hasSuffix(")"), let open = detail.range(of: "(retry ", options: .backwards) else {
            return nil
        }
        return Int(detail[open.upperBound..<detail.index(before: detail.endIndex)])
    }

    /// Idle after a failure the engine retries after a back-off.
    private static func isRetrying(_ item: Item) -> Bool {
        guard item.state == .idle else { return false }
        switch item.error {
        case .noNetwork, .timeout, .networkError, .httpError, .corrupted, .downloadFailed: return true
        default: return false
        }
    }
}
