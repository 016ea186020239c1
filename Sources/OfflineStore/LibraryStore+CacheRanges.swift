import Foundation
internal import GRDB

/// Which bytes of an item's files are on disk. Ranges are half-open `[start, end)` and kept
/// merged: after every insert no two ranges of one file overlap or touch.
///
/// `file` keys: `media`, `thumbnail`, `subtitle.<lang>`, and for HLS whatever the engine
/// names its segment files. `item.bytesPresent` counts every file except `thumbnail` and
/// `subtitle.*`: the media payload that progress is measured against.
///
/// Record a range only after its bytes are flushed (`fdatasync`): the store's word is what
/// readers trust after a crash.
extension LibraryStore {
    /// Side files that do not count toward an item's `bytesPresent`.
    static func countsTowardMedia(_ file: String) -> Bool {
        file != "thumbnail" && !file.hasPrefix("subtitle.")
    }

    /// Records `range` of `file` as present, merging it with overlapping or adjacent ranges.
    /// Empty ranges are ignored.
    /// - Throws: `.unknownItem`.
    public func addPresentRange(itemID: Int64, file: String, range: Range<Int64>) throws {
        guard !range.isEmpty else { return }
        precondition(range.lowerBound >= 0, "byte ranges start at 0 or later")
        try write { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM item WHERE id = ?", arguments: [itemID]) == true else {
                throw StoreError(.unknownItem, "no item with id \(itemID)")
            }
            let added = try Self.insertRange(db, itemID: itemID, file: file, range: range)
            if added != 0 && Self.countsTowardMedia(file) {
                try db.execute(sql: "UPDATE item SET bytesPresent = bytesPresent + ? WHERE id = ?", arguments: [added, itemID])
            }
        }
    }

    /// The present ranges of one file, in order.
    public func presentRanges(itemID: Int64, file: String) throws -> [Range<Int64>] {
        try read { db in try Self.fetchRanges(db, itemID: itemID, file: file) }
    }

    /// The parts of `range` that are not present, in order (empty when fully present).
    public func missingRanges(itemID: Int64, file: String, in range: Range<Int64>) throws -> [Range<Int64>] {
        try read { db in
            let present = try Self.fetchRanges(db, itemID: itemID, file: file, overlapping: range)
            return Self.gaps(in: range, present: present)
        }
    }

    /// Whether every byte of `range` is present.
    public func isPresent(itemID: Int64, file: String, range: Range<Int64>) throws -> Bool {
        try missingRanges(itemID: itemID, file: file, in: range).isEmpty
    }

    /// Bytes of media present (`item.bytesPresent`; 0 for an unknown item).
    public func bytesPresent(itemID: Int64) throws -> Int64 {
        try read { db in try Int64.fetchOne(db, sql: "SELECT bytesPresent FROM item WHERE id = ?", arguments: [itemID]) ?? 0 }
    }

    /// Total bytes present of one file.
    public func bytesPresent(itemID: Int64, file: String) throws -> Int64 {
        try read { db in
            try Int64.fetchOne(db, sql: #"SELECT ifnull(sum("end" - start), 0) FROM cacheRange WHERE itemID = ? AND file = ?"#,
                               arguments: [itemID, file]) ?? 0
        }
    }

    /// Forgets present ranges (eviction, cancel, a changed origin): of one file, or of every
    /// file when `file` is nil. Call it before deleting the bytes on disk.
    public func clearPresentRanges(itemID: Int64, file: String? = nil) throws {
        try write { db in
            // The validator goes with the bytes: nothing cached, nothing to resume.
            if let file {
                try db.execute(sql: "DELETE FROM cacheRange WHERE itemID = ? AND file = ?", arguments: [itemID, file])
                try db.execute(sql: "DELETE FROM cacheValidator WHERE itemID = ? AND file = ?", arguments: [itemID, file])
            } else {
                try db.execute(sql: "DELETE FROM cacheRange WHERE itemID = ?", arguments: [itemID])
                try db.execute(sql: "DELETE FROM cacheValidator WHERE itemID = ?", arguments: [itemID])
            }
            try db.execute(sql: """
                UPDATE item SET bytesPresent = (SELECT ifnull(sum("end" - start), 0) FROM cacheRange
                    WHERE itemID = ?1 AND file <> 'thumbnail' AND file NOT LIKE 'subtitle.%') WHERE id = ?1
                """, arguments: [itemID])
        }
    }

    static func fetchRanges(_ db: Database, itemID: Int64, file: String, overlapping window: Range<Int64>? = nil) throws
        -> [Range<Int64>] {
        let rows: [Row]
        if let window {
            rows = try Row.fetchAll(db, sql: """
                SELECT start, "end" FROM cacheRange WHERE itemID = ? AND file = ? AND start < ? AND "end" > ? ORDER BY start
                """, arguments: [itemID, file, window.upperBound, window.lowerBound])
        } else {
            rows = try Row.fetchAll(db.cachedStatement(sql: #"SELECT start, "end" FROM cacheRange WHERE itemID = ? AND file = ? ORDER BY start"#),
                                    arguments: [itemID, file])
        }
        return rows.compactMap { row in
            let start: Int64 = row[0], end: Int64 = row[1]
            return start < end ? start..<end : nil
        }
    }

    /// The parts of `range` not covered by `present` (sorted, disjoint).
    static func gaps(in range: Range<Int64>, present: [Range<Int64>]) -> [Range<Int64>] {
        var missing: [Range<Int64>] = []
        var cursor = range.lowerBound
        for r in present where r.upperBound > cursor {
            if r.lowerBound >= range.upperBound { break }
            if r.lowerBound > cursor { missing.append(cursor..<r.lowerBound) }
            cursor = max(cursor, r.upperBound)
            if cursor >= range.upperBound { break }
        }
        if cursor < range.upperBound { missing.append(cursor..<range.upperBound) }
        return missing
    }
}
