import Foundation
internal import GRDB

/// A cheap fingerprint of what a listing of the library shows: it changes whenever an item,
/// a source, a category, a link or a licence's expiry changes (through this API, from any
/// process).
///
/// A front end that keeps the tree in memory (the mount) polls it and rebuilds only when it
/// differs, instead of querying the store per request.
public struct StoreChangeToken: Hashable, Sendable {
    let values: [Int64]
}

extension LibraryStore {
    /// The current change token: one read of a few aggregates, each answered from an index
    /// end (no scan of `item` or `itemCategory`: the mount reads it every second).
    ///
    /// Every write that changes a listed field either appends an event (states, merges,
    /// sources, policies) or bumps `item.updatedAt` (size, download time). A page of a paged
    /// merge commits without an event: its new items move the largest item id, its changed
    /// items `updatedAt`, and the merge's end writes the event that covers the rest (links
    /// re-made, items removed). A removed source changes the source count; categories are
    /// counted (a small table); licence expiries (which the mount checks on open from its
    /// tree) are summed.
    ///
    /// The one event left out is the note of streamed items evicted together (kind `evict`,
    /// no item): what programs streamed goes and comes back every second while a library is
    /// scanned past `cache-limit`, and a listing shows almost none of it (an item's bytes show
    /// in its xattrs, read from the store; an unsubscribed source's item left with no byte
    /// leaves its folder at the next rebuild). Counted, it rebuilt a large library's tree
    /// every second. Nor is the note of a sync the origin answered `304` (kind `sync`, no
    /// details; a merge's own `sync` event has its counts): nothing changed. The other events
    /// are indexed apart (`event_listed`, schemas v11 and v15), so the newest of them is one
    /// index look-up however many notes came after it.
    /// The events a listing may show the outcome of: the condition of the `event_listed` index
    /// (the token's query must state it as written there to use it).
    static let listedEvents = "NOT (itemID IS NULL AND (kind = 'evict' OR (kind = 'sync' AND details IS NULL)))"

    /// When a listing of the library last changed, as far as the store knows: its newest event
    /// of a kind that may add, remove or move a name, item change or source; nil for an empty
    /// library. Failures, warnings and progress are left out: a mount started offline logs
    /// failed syncs and changes no name.
    public func lastListingChange() throws -> Date? {
        try read { db in
            let nameMoving: [EventKind] = [.sync, .state, .source, .policy, .discovered, "evict", "licence"]
            let kinds = StoreSchema.quoted(nameMoving.map(\.rawValue))
            let time = try Double.fetchOne(db, sql: """
                SELECT max(ifnull((SELECT time FROM event WHERE \(Self.listedEvents) AND kind IN (\(kinds))
                                   ORDER BY seq DESC LIMIT 1), 0),
                           ifnull((SELECT max(updatedAt) FROM item), 0),
                           ifnull((SELECT max(addedAt) FROM source), 0))
                """) ?? 0
            return time > 0 ? Date(timeIntervalSince1970: time) : nil
        }
    }

    public func changeToken() throws -> StoreChangeToken {
        try read { db in
            let row = try Row.fetchOne(db, sql: """
                SELECT ifnull((SELECT seq FROM event WHERE \(Self.listedEvents) ORDER BY seq DESC LIMIT 1), 0),
                       (SELECT ifnull(max(id), 0) FROM item),
                       (SELECT ifnull(CAST(max(updatedAt) * 1000000 AS INTEGER), 0) FROM item),
                       (SELECT count(*) FROM category),
                       (SELECT count(*) * 2 + ifnull(sum(subscribed), 0) FROM source),
                       (SELECT count(*) + ifnull(CAST(sum(expiresAt) * 1000 AS INTEGER), 0) FROM licence)
                """)
            guard let row else { return StoreChangeToken(values: []) }
            return StoreChangeToken(values: (0..<6).map { row[$0] as Int64? ?? 0 })
        }
    }
}
