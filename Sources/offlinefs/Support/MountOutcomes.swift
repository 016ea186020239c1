import Foundation
import OfflineEngine
import OfflineStore

/// Waits for what a command sent to a running mount led to, read from the store the engine
/// writes: a mounted engine syncs and renews on its own threads and answers the control
/// line at once, yet `offlinefs sync` or `renew` in a script must say by its exit status
/// whether it worked, mounted or not.
struct MountOutcomes {
    let store: LibraryStore
    /// The library's folder: while its mount is served, the engine runs (`RunningMount`).
    let library: URL
    /// How often the store is looked at.
    var interval: Duration = .milliseconds(100)
    /// How long the library's disk may stay full before the wait gives up: the engine cannot
    /// record the outcome there, so none will come.
    var fullDiskPatience: Duration = .seconds(3)
    /// Less room than this on the library's disk is full (a store commit needs a few pages).
    static let fullBelow: UInt64 = 256 << 10

    /// One source's sync: its summary, or the error it failed with.
    struct SyncOutcome {
        let sourceName: String
        let summary: String
        let failed: Bool
    }

    /// The sources a `sync` line asks for, as they are before it is sent; `outcome` compares.
    func sourcesBeforeSync(named name: String?) throws -> [Source] {
        try store.sources().filter { name == nil ? $0.subscribed : $0.name == name }
    }

    /// Waits until each of `sources` has synced again (its `lastSyncAt` moved), or the mount
    /// has ended; `eventsAfter`: the event log's last line before the request.
    func syncs(of sources: [Source], eventsAfter seq: Int64) throws -> [SyncOutcome] {
        var pending = Dictionary(uniqueKeysWithValues: sources.map { ($0.id, $0) })
        var outcomes: [SyncOutcome] = []
        var fullSince: ContinuousClock.Instant?
        while !pending.isEmpty {
            for now in try store.sources() {
                guard let before = pending[now.id], now.lastSyncAt != before.lastSyncAt else { continue }
                pending[now.id] = nil
                if let error = now.lastSyncError {
                    outcomes.append(SyncOutcome(sourceName: now.name, summary: "\(now.name): failed: \(error)", failed: true))
                } else {
                    let synced = try store.events(after: seq, limit: 10_000).last { $0.kind == .sync && $0.sourceID == now.id }
                    let summary = synced.map { $0.message.replacingOccurrences(of: "synced \(now.name): ", with: "") }
                    outcomes.append(SyncOutcome(sourceName: now.name, summary: "\(now.name): \(summary ?? "not modified")", failed: false))
                }
            }
            guard !pending.isEmpty else { break }
            try waitWhileMounted("the sync of \(pending.values.map(\.name).sorted().joined(separator: ", "))", fullSince: &fullSince)
        }
        return outcomes.sorted { $0.sourceName < $1.sourceName }
    }

    /// Waits for the licence event (acquired) or the error event (failed) a `renew` or
    /// `acquire` of `itemID` writes after event `seq`; returns the event's message.
    func licence(itemID: Int64, eventsAfter seq: Int64) throws -> Result<String, CLIError> {
        var seen = seq
        var fullSince: ContinuousClock.Instant?
        while true {
            for event in try store.events(after: seen, limit: 1_000) {
                seen = event.seq
                guard event.itemID == itemID else { continue }
                if event.kind == "licence" { return .success(event.message) }
                if event.kind == .error, event.message.contains("renew failed") || event.message.contains("acquire failed") {
                    return .failure(CLIError(event.message))
                }
            }
            try waitWhileMounted("the licence of item \(itemID)", fullSince: &fullSince)
        }
    }

    private func waitWhileMounted(_ what: String, fullSince: inout ContinuousClock.Instant?) throws {
        guard RunningMount.controlFile(for: library) != nil else {
            throw CLIError("the mount ended before \(what) was done; its outcome will show in 'offlinefs status'")
        }
        if let free = Self.freeBytes(library), free < Self.fullBelow {
            let since = fullSince ?? .now
            fullSince = since
            if ContinuousClock.now - since >= fullDiskPatience {
                throw CLIError("the disk of the library (\(library.path)) is full: the engine cannot record \(what); "
                               + "free some space there and run the command again")
            }
        } else {
            fullSince = nil
        }
        usleep(UInt32(interval / .microseconds(1)))
    }

    /// The room the engine (this user) may still use on `folder`'s disk.
    static func freeBytes(_ folder: URL) -> UInt64? {
        var info = statvfs()
        guard statvfs(folder.path, &info) == 0 else { return nil }
        return UInt64(getuid() == 0 ? info.f_bfree : info.f_bavail) * UInt64(info.f_frsize)
    }
}
