import Foundation
import OfflineStore
import Synchronization

/// `progress` lines in the event log (`.events`) for the items being downloaded: one once
/// the item has gained 5 % or 5 seconds have passed since its last line (or its start), at
/// most one a second per item; and their speeds, which `.status` shows from its first read.
/// Checked every second while a download runs, on the clock's thread; the bytes are those
/// the store holds (durable), not those still in flight.
///
/// A catalog size the origin contradicts is corrected here, once the transfer knows the
/// origin's, rather than at the end (lines said "100.0% (0.9 MiB of 0.0 MiB)" until then).
final class ProgressEvents: Sendable {
    /// The size the origin gave for an item's media, once a transfer knows it.
    typealias OriginSize = @Sendable (_ itemID: Int64) -> Int64?

    struct Mark: Equatable {
        var time: Date
        var bytes: Int64
    }

    private struct State {
        var marks: [Int64: Mark] = [:]
        /// The running chain of checks (one at a time): a check of an older one stops.
        var generation = 0
        var timer: (any ClockTimer)?
        /// Each running download's speed, from the bytes each check saw (`.status`).
        var speeds = SpeedMeter()
    }
    private let state = Mutex(State())  // leaf lock: store writes happen outside it
    private let store: LibraryStore
    private let clock: any EngineClock
    private let originSize: OriginSize

    static let interval: TimeInterval = 1
    static let stepFraction = 0.05
    static let stepSeconds: TimeInterval = 5

    init(store: LibraryStore, clock: any EngineClock, originSize: @escaping OriginSize) {
        self.store = store
        self.clock = clock
        self.originSize = originSize
    }

    func started(itemID: Int64) {
        let bytes = (try? store.bytesPresent(itemID: itemID)) ?? 0
        let generation = state.withLock { state -> Int? in
            let idle = state.marks.isEmpty
            let now = clock.now()
            state.marks[itemID] = Mark(time: now, bytes: bytes)
            state.speeds.record(itemID, bytes: bytes, at: now.timeIntervalSince1970)
            guard idle else { return nil }
            state.generation += 1
            return state.generation
        }
        if let generation { schedule(generation) }
    }

    /// The running downloads' speeds as the checks measured them.
    var speeds: SpeedMeter { state.withLock { $0.speeds } }

    func finished(itemID: Int64) {
        let timer = state.withLock { state -> (any ClockTimer)? in
            state.marks[itemID] = nil
            state.speeds.keepOnly(Set(state.marks.keys))
            guard state.marks.isEmpty else { return nil }
            state.generation += 1
            defer { state.timer = nil }
            return state.timer
        }
        timer?.cancel()
    }

    /// Whether a line is due for an item at `bytes` of `size` now, its last line at `last`.
    static func isDue(last: Mark, now: Date, bytes: Int64, size: Int64?) -> Bool {
        let elapsed = now.timeIntervalSince(last.time)
        guard bytes > last.bytes, elapsed >= interval else { return false }
        if elapsed >= stepSeconds { return true }
        guard let size, size > 0 else { return false }
        return Double(bytes - last.bytes) / Double(size) >= stepFraction
    }

    private func schedule(_ generation: Int) {
        let timer = clock.schedule(at: clock.now().addingTimeInterval(Self.interval)) { [weak self] in
            self?.check(generation)
        }
        let current = state.withLock { state -> Bool in
            guard state.generation == generation else { return false }
            state.timer = timer
            return true
        }
        if !current { timer.cancel() }
    }

    private func check(_ generation: Int) {
        let now = clock.now()
        guard let marks = state.withLock({ $0.generation == generation ? $0.marks : nil }) else { return }
        for (itemID, last) in marks {
            guard var item = try? store.item(id: itemID), item.state == .downloading else { continue }
            if item.type != .hls, let size = originSize(itemID), size != item.size, (try? store.setSize(itemID: itemID, size)) != nil {
                item.size = size
            }
            state.withLock { state in
                guard state.marks[itemID] != nil else { return }
                state.speeds.record(itemID, bytes: item.bytesPresent, at: now.timeIntervalSince1970)
            }
            guard Self.isDue(last: last, now: now, bytes: item.bytesPresent, size: item.size) else { continue }
            let stillTracked = state.withLock { state -> Bool in
                guard state.marks[itemID] != nil else { return false }
                state.marks[itemID] = Mark(time: now, bytes: item.bytesPresent)
                return true
            }
            guard stillTracked else { continue }
            _ = try? store.appendEvent(kind: .progress, itemID: itemID, sourceID: item.sourceID,
                                       message: "\(item.fileName ?? item.contentID): \(Self.describe(item))")
        }
        schedule(generation)
    }

    /// `42.0% (26.9 MiB of 64.0 MiB)`, or the bytes alone when the size is unknown.
    static func describe(_ item: Item) -> String {
        func mebibytes(_ bytes: Int64) -> String { String(format: "%.1f MiB", Double(bytes) / 1_048_576) }
        guard let size = item.size, size > 0 else { return mebibytes(item.bytesPresent) }
        return String(format: "%.1f%% ", item.progress * 100) + "(\(mebibytes(item.bytesPresent)) of \(mebibytes(size)))"
    }
}
