import Foundation
internal import GRDB

/// What was played (docs/playback.md): the resume point, the watched mark and the last
/// playback of each item. Two kinds of writers:
/// - a playback the engine saw (a player's reads), recorded when it ends;
/// - an explicit mark (`played`, `watched`, `unwatched`, an xattr write, the mpv script).
///
/// An explicit mark wins over the reads of a playback that began before it: the user said
/// so after the program started reading.
extension LibraryStore {
    /// Records a playback that began at `startedAt` and ended now: its resume point
    /// (seconds, when the duration is known) and whether it reached the end. A playback that
    /// reaches the end marks the item watched and sets its resume point back to 0. Returns
    /// false when an explicit mark since `startedAt` won.
    @discardableResult
    public func recordPlayback(itemID: Int64, startedAt: Date, position: Double?, watched: Bool, at time: Date) throws -> Bool {
        let now = time.dbTime
        return try write { db in
            try db.execute(sql: """
                UPDATE item SET lastPlayedAt = ?1,
                    position = CASE WHEN ?2 THEN 0 ELSE ifnull(?3, position) END,
                    watchedAt = CASE WHEN ?2 THEN ?1 ELSE watchedAt END,
                    updatedAt = ?1
                WHERE id = ?4 AND (playMarkedAt IS NULL OR playMarkedAt < ?5)
                """, arguments: [now, watched, position.map { max(0, $0) }, itemID, startedAt.dbTime])
            return db.changesCount > 0
        }
    }

    /// An explicit mark. `position`: the new resume point in seconds; `watched`: set or clear
    /// the watched mark (set: the resume point goes back to 0); `played`: a playback happened
    /// now (the last-played time).
    public func markPlayState(itemID: Int64, position: Double? = nil, watched: Bool? = nil, played: Bool = false,
                              at time: Date) throws {
        let now = time.dbTime
        var assignments = ["playMarkedAt = ?1", "updatedAt = ?1"]
        var values: [(any DatabaseValueConvertible)?] = [now, itemID]
        func assign(_ column: String, _ value: (any DatabaseValueConvertible)?) {
            values.append(value)
            assignments.append("\(column) = ?\(values.count)")
        }
        if played { assignments.append("lastPlayedAt = ?1") }
        switch watched {
        case true?:
            assignments.append("watchedAt = ?1")
            assign("position", 0.0)
        case false?:
            assign("watchedAt", nil)
            if let position { assign("position", max(0, position)) }
        case nil:
            if let position { assign("position", max(0, position)) }
        }
        try write { db in
            try db.execute(sql: "UPDATE item SET \(assignments.joined(separator: ", ")) WHERE id = ?2",
                           arguments: StatementArguments(values))
            if db.changesCount == 0 { throw StoreError(.unknownItem, "no item with id \(itemID)") }
        }
    }

    /// What `delete-watched-after` evicts: items with bytes in the cache, not locked, marked
    /// watched at or before `cutoff` (the engine skips open ones); and the earliest watched
    /// mark after it, when the next becomes due. An item asked for again after it was watched
    /// stays until it is watched again: the request says the user wants it back.
    public func watchedEvictions(cutoff: Date) throws -> (due: [Item], nextMark: Date?) {
        try read { db in
            let filter = """
                watchedAt IS NOT NULL AND bytesPresent > 0 AND locked = 0 AND state <> 'deleted'
                AND (requestedAt IS NULL OR requestedAt <= watchedAt)
                """
            let due = try Row.fetchAll(db, sql: "SELECT \(Item.columns) FROM item WHERE \(filter) AND watchedAt <= ? ORDER BY watchedAt, id",
                                       arguments: [cutoff.dbTime]).map(Item.init(row:))
            let next = try Double.fetchOne(db, sql: "SELECT min(watchedAt) FROM item WHERE \(filter) AND watchedAt > ?",
                                           arguments: [cutoff.dbTime])
            return (due, next.map { Date(timeIntervalSince1970: $0) })
        }
    }
}
