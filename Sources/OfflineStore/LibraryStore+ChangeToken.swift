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
    /// The current change token: one read of a few aggregates (a scan of `item`, a few ms at
    /// 100,000 items).
    ///
    /// Every write that changes a listed field either appends an event (states, merges,
    /// sources, policies) or bumps `item.updatedAt` (size, download time); counts catch the
    /// rest (links, categories); licence expiries (which the mount checks on open from its
    /// tree) are summed.
    public func changeToken() throws -> StoreChangeToken {
        try read { db in
            let row = try Row.fetchOne(db, sql: """
                SELECT (SELECT ifnull(max(seq), 0) FROM event),
                       (SELECT count(*) FROM item),
                       (SELECT ifnull(CAST(max(updatedAt) * 1000000 AS INTEGER), 0) FROM item),
                       (SELECT count(*) FROM itemCategory),
                       (SELECT count(*) FROM category),
                       (SELECT count(*) * 2 + ifnull(sum(subscribed), 0) FROM source),
                       (SELECT count(*) + ifnull(CAST(sum(expiresAt) * 1000 AS INTEGER), 0) FROM licence)
                """)
            guard let row else { return StoreChangeToken(values: []) }
            return StoreChangeToken(values: (0..<7).map { row[$0] as Int64? ?? 0 })
        }
    }
}
