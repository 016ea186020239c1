public import Foundation
import Glibc
import OfflineStore

/// Keeps the cache under `cache-limit` and the disk above `free-space-reserve` (DESIGN §1, §5):
/// before a download starts it makes room by evicting, streamed-only items first (least
/// recently used), requested ones only with `auto-purge` on, locked, open and running items
/// never. When no room can be made the item waits as `cache-limit` or `no-space`. Bytes that
/// programs stream count too: once they pass a limit, the same eviction brings the cache back
/// (`keepWithinLimits`).
public struct SpaceManager: Sendable {
    let store: LibraryStore
    let transfers: TransferEngine
    /// Bytes free for an unprivileged writer on the library's filesystem (nil: unknown).
    let freeSpace: @Sendable (URL) -> Int64?

    public static let statvfsFreeSpace: @Sendable (URL) -> Int64? = { folder in
        var info = statvfs()
        guard statvfs(folder.path, &info) == 0 else { return nil }
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }

    /// Makes room for `need` more bytes of `item`; returns the error that stops it, or nil.
    /// The bytes the running downloads (`busy`) are still to write count as taken: three
    /// downloads started together each found room for itself alone, and the cache passed
    /// its limit by two of them.
    func makeRoom(for item: Item, need: Int64, policies: PolicySet, busy: Set<Int64>) -> (ItemErrorCode, String)? {
        let coming = busy.reduce(Int64(0)) { sum, id in
            guard id != item.id, let running = try? store.item(id: id), let size = running.size else { return sum }
            return sum + max(0, size - running.bytesPresent)
        }
        return evict(toFit: need + coming, excluding: item.id, wishedAt: item.requestedAt, policies: policies, busy: busy) { victim, code in
            note(victim, evictedFor: code)
        }
    }

    /// Items `keepWithinLimits` evicts at most per call: each costs a few store reads and a
    /// file's removal (the commit is shared), and the scheduler thread must not stay away long.
    let evictionsPerCheck: Int

    /// Free space a check after a read ran out of it makes beyond the reserve: what streams
    /// write before the next check.
    static let roomAfterShortage: Int64 = 64 << 20

    /// Evicts until the cache is back under `cache-limit` and the disk above
    /// `free-space-reserve` (and `room` more), after programs streamed bytes past them, up to
    /// `evictionsPerCheck` items. Streamed-only items evicted make one event per call (a scan
    /// of a library evicts thousands); requested ones one each, as before a download.
    /// Returns whether the cache is still over a limit after evicting some (another call may
    /// evict more; when none could go, the next claimed bytes bring the next call).
    func keepWithinLimits(policies: PolicySet, busy: Set<Int64>, room: Int64 = 0) -> Bool {
        var streamed: [ItemErrorCode: (count: Int, bytes: Int64)] = [:]
        var evictions = 0
        let stillShort = evict(toFit: 0, excluding: nil, policies: policies, busy: busy, room: room,
                               candidates: evictionsPerCheck) { victim, code in
            evictions += 1
            guard !victim.requested else { return note(victim, evictedFor: code) }
            streamed[code, default: (0, 0)].count += 1
            streamed[code, default: (0, 0)].bytes += victim.bytesPresent
        }
        for (code, evicted) in streamed.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            _ = try? store.appendEvent(kind: "evict", message: "\(evicted.count) streamed item\(evicted.count == 1 ? "" : "s") (\(evicted.bytes) bytes): evicted for \(code.rawValue)")
        }
        return stillShort != nil && evictions > 0
    }

    /// Evicts candidates (the first `candidates` the store gives), least recently used first,
    /// while `need` more bytes would not fit; tells `evicted` of each. Returns what still
    /// stops them, or nil.
    ///
    /// The victims that cover the shortfall go together, in one store transaction: a scan of
    /// a library streams thousands of first windows a minute, more than one synced commit per
    /// item keeps up with.
    ///
    /// `wishedAt`: when the item that needs the room was asked for. `auto-purge` gives it only
    /// requested items downloaded before then: older wishes make room for newer ones, and a
    /// queue larger than the disk does not evict each item it downloaded for the next (it
    /// fetched many times what it kept, and dropped every wish but the last).
    private func evict(toFit need: Int64, excluding itemID: Int64?, wishedAt: Date? = nil, policies: PolicySet,
                       busy: Set<Int64>, room: Int64 = 0, candidates limit: Int = .max,
                       evicted: (Item, ItemErrorCode) -> Void) -> (ItemErrorCode, String)? {
        // The sum is a scan of every item: skipped when no cache-limit needs it.
        var cached: Int64 = 0
        if policies.cacheLimit.bytes != nil {
            do { cached = try store.totalBytesPresent() } catch { return nil }
        }
        var candidates: [Item]?
        while let (code, message) = shortfall(need: need, cached: cached, policies: policies, room: room) {
            if candidates == nil {
                let all = (try? store.evictionCandidates(limit: limit)) ?? []
                let usable = all.filter { $0.id != itemID && !busy.contains($0.id) && !transfers.fetcher.isOpen(itemID: $0.id) }
                // Streamed-only first; requested (downloaded on purpose) only with auto-purge.
                let purgeable = usable.filter { victim in
                    victim.requested && victim.state == .cached
                        && wishedAt.map { wish in victim.downloadedAt.map { $0 < wish } ?? true } ?? true
                }
                candidates = usable.filter { !$0.requested } + (policies.autoPurge ? purgeable : [])
            }
            // As many as cover the shortfall, were their bytes gone.
            var victims: [Item] = []
            var freed: Int64 = 0
            while let next = candidates?.first,
                  victims.isEmpty || shortfall(need: need, cached: cached - freed, policies: policies, freed: freed, room: room) != nil {
                candidates?.removeFirst()
                victims.append(next)
                freed += next.bytesPresent
            }
            guard !victims.isEmpty else { return (code, message) }
            for victim in evict(victims) {
                evicted(victim, code)
                cached -= victim.bytesPresent
            }
        }
        return nil
    }

    /// Evicts `victims` in one go; if that fails, one by one (a victim that cannot go does
    /// not keep the others). Returns those evicted.
    private func evict(_ victims: [Item]) -> [Item] {
        do {
            try transfers.evict(itemIDs: victims.map(\.id))
        } catch {
            return victims.filter { victim in (try? transfers.evict(itemID: victim.id)) != nil && unrequest(victim) }
        }
        return victims.filter(unrequest)
    }

    /// A requested item evicted is no longer requested; false if the store refused.
    private func unrequest(_ victim: Item) -> Bool {
        guard victim.requested else { return true }
        return (try? store.setRequested(itemID: victim.id, false)) != nil
    }

    private func note(_ victim: Item, evictedFor code: ItemErrorCode) {
        _ = try? store.appendEvent(kind: "evict", itemID: victim.id, sourceID: victim.sourceID,
                                   message: "\(victim.fileName ?? victim.contentID): evicted for \(code.rawValue)")
    }

    /// What stops `need` more bytes, if anything; `freed`: bytes about to be freed, counted
    /// as free space already; `room`: free space wanted beyond the reserve. The reserve is
    /// never less than what cache writes leave to the store (`FetchSettings.keepFree`).
    private func shortfall(need: Int64, cached: Int64, policies: PolicySet, freed: Int64 = 0, room: Int64 = 0) -> (ItemErrorCode, String)? {
        if let limit = policies.cacheLimit.bytes, cached + need > limit {
            return (.cacheLimit, "\(need) more bytes would pass cache-limit \(policies.cacheLimit) (\(cached) cached)")
        }
        let reserve = max(policies.freeSpaceReserve, transfers.fetcher.settings.keepFree)
        if let free = freeSpace(store.folder).map({ $0 + freed }), free - need < reserve + room {
            let kept = reserve > policies.freeSpaceReserve ? "the \(ByteLimit.bytes(reserve).description) the library keeps for its records"
                : "free-space-reserve \(ByteLimit.bytes(reserve).description)"
            return (.noSpace, "\(need) more bytes would leave less than \(kept) free (\(free) free)")
        }
        return nil
    }
}
