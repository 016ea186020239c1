import Foundation
internal import GRDB

/// Queries the engine's scheduler runs on every tick: small, indexed, no full listings.
extension LibraryStore {
    /// Items in any of `states`, oldest request first (by `updatedAt`, then id).
    public func items(inStates states: [ItemState]) throws -> [Item] {
        guard !states.isEmpty else { return [] }
        let list = states.map { "'\($0.rawValue)'" }.joined(separator: ",")
        return try read { db in
            try Row.fetchAll(db, sql: "SELECT \(Item.columns) FROM item WHERE state IN (\(list)) ORDER BY updatedAt, id")
                .map(Item.init(row:))
        }
    }

    /// The ids of the `limit` items of `sourceID` in `state` added last (newest first): what a
    /// sync just added, without reading every other item in that state.
    public func newestItemIDs(sourceID: Int64, state: ItemState, limit: Int) throws -> [Int64] {
        try read { db in
            try Int64.fetchAll(db, sql: """
                SELECT id FROM item WHERE sourceID = ? AND state = ? ORDER BY addedAt DESC, id DESC LIMIT ?
                """, arguments: [sourceID, state.rawValue, limit])
        }
    }

    /// Media bytes in the cache, every item together (what `cache-limit` caps).
    public func totalBytesPresent() throws -> Int64 {
        try read { db in try Int64.fetchOne(db, sql: "SELECT ifnull(sum(bytesPresent), 0) FROM item") ?? 0 }
    }

    /// Items holding media bytes that nothing pins (not locked), in the order eviction takes
    /// them: never requested (streamed) before requested, least recently used first; at most
    /// `limit`. The caller skips open and running items.
    public func evictionCandidates(limit: Int = .max) throws -> [Item] {
        try read { db in
            try Row.fetchAll(db, sql: """
                SELECT \(Item.columns) FROM item WHERE bytesPresent > 0 AND locked = 0 AND state <> 'deleted'
                ORDER BY requested, ifnull(lastAccessAt, ifnull(downloadedAt, addedAt)), id LIMIT ?
                """, arguments: [Int64(clamping: limit)]).map(Item.init(row:))
        }
    }

    /// Every licence that has an expiry (for the scheduler's expiry timer).
    public func expiringLicences() throws -> [Licence] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM licence WHERE expiresAt IS NOT NULL ORDER BY expiresAt")
                .map(Licence.init(row:))
        }
    }

    /// The JSON catalog's `lookup` URL template of a source, from its last sync.
    public func lookupTemplate(sourceID: Int64) throws -> String? {
        try read { db in
            try String.fetchOne(db, sql: "SELECT lookupTemplate FROM source WHERE id = ?", arguments: [sourceID])
        }
    }

    public func setLookupTemplate(sourceID: Int64, _ template: String?) throws {
        try write { db in
            try db.execute(sql: "UPDATE source SET lookupTemplate = ? WHERE id = ?", arguments: [template, sourceID])
        }
    }
}

extension LibraryStore {
    /// Moves a `queued` or `idle` item to `downloading` (logging the state event) in one
    /// transaction; false when a command moved it elsewhere first (paused, cancelled), so
    /// the scheduler never starts an item the user just stopped.
    public func claimDownload(itemID: Int64) throws -> Bool {
        let now = clock()
        return try write { db in
            guard let old = try Self.fetchItem(db, id: itemID), old.state == .queued || old.state == .idle else { return false }
            try db.execute(sql: "UPDATE item SET state = 'downloading', error = NULL, errorDetail = NULL, updatedAt = ? WHERE id = ?",
                           arguments: [now.dbTime, itemID])
            var details = ["from": old.state.rawValue, "to": ItemState.downloading.rawValue]
            if let error = old.error { details["previousError"] = error.rawValue }
            try insertEvent(db, kind: .state, itemID: itemID, sourceID: old.sourceID,
                            message: "\(old.fileName ?? old.contentID): \(old.state.rawValue) → downloading",
                            details: JSONText.encode(details), at: now)
            return true
        }
    }
}
