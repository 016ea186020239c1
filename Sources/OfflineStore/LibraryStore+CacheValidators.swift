import Foundation
internal import GRDB

/// The validator each item file's cached bytes belong to (see `CacheValidator`), kept in the
/// same transactions as the range map so the two never disagree after a crash.
extension LibraryStore {
    /// Records `ranges` of `file` as present (merged with what is there) and the validator
    /// they belong to, in one transaction. Call only after the bytes are flushed.
    /// - Throws: `.unknownItem`.
    public func commitPresentRanges(itemID: Int64, file: String, ranges: [Range<Int64>],
                                    validator: CacheValidator?) throws {
        try write { db in
            guard try Self.commit(db, CacheCommit(itemID: itemID, file: file, ranges: ranges, validator: validator)) else {
                throw StoreError(.unknownItem, "no item with id \(itemID)")
            }
        }
    }

    /// Several `commitPresentRanges` in one transaction (one WAL sync for many files: the
    /// flusher's batches of HLS segments). Entries of items that no longer exist are skipped.
    /// - Returns: the indices of `batch` that were skipped.
    public func commitPresentRanges(_ batch: [CacheCommit]) throws -> Set<Int> {
        try write { db in
            var skipped = Set<Int>()
            for (index, entry) in batch.enumerated() where try !Self.commit(db, entry) { skipped.insert(index) }
            return skipped
        }
    }

    /// One file's claim inside a transaction; false when the item is gone.
    static func commit(_ db: Database, _ entry: CacheCommit) throws -> Bool {
        guard try Bool.fetchOne(db, sql: "SELECT 1 FROM item WHERE id = ?", arguments: [entry.itemID]) == true else {
            return false
        }
        try upsertValidator(db, itemID: entry.itemID, file: entry.file, entry.validator)
        var added: Int64 = 0
        for range in entry.ranges where !range.isEmpty {
            precondition(range.lowerBound >= 0, "byte ranges start at 0 or later")
            added += try insertRange(db, itemID: entry.itemID, file: entry.file, range: range)
        }
        if added != 0 && countsTowardMedia(entry.file) {
            try db.execute(sql: "UPDATE item SET bytesPresent = bytesPresent + ? WHERE id = ?", arguments: [added, entry.itemID])
        }
        if let url = entry.url, entry.validator != nil {
            try db.cachedStatement(sql: "UPDATE cacheValidator SET url = ? WHERE itemID = ? AND file = ?")
                .execute(arguments: [url, entry.itemID, entry.file])
        }
        return true
    }

    /// Forgets every present range of `file` and records the validator new bytes will
    /// belong to (nil: none yet), in one transaction: the origin changed, or the bytes were
    /// found corrupt.
    public func resetCache(itemID: Int64, file: String, validator: CacheValidator?) throws {
        let now = clock()
        try write { db in
            // Other bytes at the origin for the same URL: the file's time moves with them.
            if file == "media", let validator, let old = try Self.validator(db, itemID: itemID, file: file), old != validator {
                try db.execute(sql: "UPDATE item SET mediaChangedAt = ? WHERE id = ?", arguments: [now.dbTime, itemID])
            }
            try Self.resetCache(db, itemID: itemID, file: file, validator: validator)
        }
    }

    /// Forgets every range of each file (no validator kept), all in one transaction: evicting
    /// many items costs one synced commit, not one each.
    public func resetCache(_ files: [(itemID: Int64, file: String)]) throws {
        guard !files.isEmpty else { return }
        try write { db in
            for entry in files { try Self.resetCache(db, itemID: entry.itemID, file: entry.file, validator: nil) }
        }
    }

    private static func resetCache(_ db: Database, itemID: Int64, file: String, validator: CacheValidator?) throws {
        try db.cachedStatement(sql: "DELETE FROM cacheRange WHERE itemID = ? AND file = ?").execute(arguments: [itemID, file])
        try db.cachedStatement(sql: """
            UPDATE item SET bytesPresent = (SELECT ifnull(sum("end" - start), 0) FROM cacheRange
                WHERE itemID = ?1 AND file <> 'thumbnail' AND file NOT LIKE 'subtitle.%') WHERE id = ?1
            """).execute(arguments: [itemID])
        try upsertValidator(db, itemID: itemID, file: file, validator)
        // No longer whole: not a copy for other items to link (`wholeSideFile`).
        try db.cachedStatement(sql: "UPDATE cacheValidator SET url = NULL WHERE itemID = ? AND file = ?")
            .execute(arguments: [itemID, file])
    }

    private static func validator(_ db: Database, itemID: Int64, file: String) throws -> CacheValidator? {
        try Row.fetchOne(db, sql: "SELECT etag, lastModified, totalSize FROM cacheValidator WHERE itemID = ? AND file = ?",
                         arguments: [itemID, file]).map { CacheValidator(etag: $0[0], lastModified: $0[1], totalSize: $0[2]) }
    }

    private static func upsertValidator(_ db: Database, itemID: Int64, file: String, _ validator: CacheValidator?) throws {
        guard let validator else {
            try db.execute(sql: "DELETE FROM cacheValidator WHERE itemID = ? AND file = ?", arguments: [itemID, file])
            return
        }
        try db.cachedStatement(sql: """
            INSERT INTO cacheValidator (itemID, file, etag, lastModified, totalSize) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (itemID, file) DO UPDATE SET etag = excluded.etag, lastModified = excluded.lastModified,
                totalSize = excluded.totalSize
            """).execute(arguments: [itemID, file, validator.etag, validator.lastModified, validator.totalSize])
    }

    /// Merges one range into the map (every stored range that overlaps or touches it is
    /// absorbed); returns how many bytes it added.
    static func insertRange(_ db: Database, itemID: Int64, file: String, range: Range<Int64>) throws -> Int64 {
        let touching = try Row.fetchAll(db.cachedStatement(sql: """
            SELECT start, "end" FROM cacheRange WHERE itemID = ? AND file = ? AND start <= ? AND "end" >= ?
            """), arguments: [itemID, file, range.upperBound, range.lowerBound])
        var merged = range
        var removed: Int64 = 0
        for row in touching {
            let start: Int64 = row[0], end: Int64 = row[1]
            merged = min(merged.lowerBound, start)..<max(merged.upperBound, end)
            removed += end - start
        }
        try db.cachedStatement(sql: """
            DELETE FROM cacheRange WHERE itemID = ? AND file = ? AND start <= ? AND "end" >= ?
            """).execute(arguments: [itemID, file, range.upperBound, range.lowerBound])
        try db.cachedStatement(sql: #"INSERT INTO cacheRange (itemID, file, start, "end") VALUES (?, ?, ?, ?)"#)
            .execute(arguments: [itemID, file, merged.lowerBound, merged.upperBound])
        return Int64(merged.count) - removed
    }
}

/// Ranges of one item file to claim, with the origin version they belong to.
public struct CacheCommit: Sendable, Equatable {
    public var itemID: Int64
    public var file: String
    public var ranges: [Range<Int64>]
    public var validator: CacheValidator?
    /// A side file's URL: once its ranges cover the file, other items with that URL may link
    /// it (`wholeSideFile`), from the same transaction on.
    public var url: String?

    public init(itemID: Int64, file: String, ranges: [Range<Int64>], validator: CacheValidator?, url: String? = nil) {
        self.itemID = itemID
        self.file = file
        self.ranges = ranges
        self.validator = validator
        self.url = url
    }
}

/// Where an item's files come from: the few columns the range fetcher needs when it first
/// touches a file (read without decoding the whole item: this is on a reader's first open).
public struct CacheFileSource: Sendable, Equatable {
    public var mediaURL: String?
    public var thumbnailURL: String?
    public var subtitles: [SubtitleTrack]
    /// The item's source's feed URL (its host sets the destination policy).
    public var feedURL: String

    public init(mediaURL: String?, thumbnailURL: String?, subtitles: [SubtitleTrack], feedURL: String) {
        self.mediaURL = mediaURL
        self.thumbnailURL = thumbnailURL
        self.subtitles = subtitles
        self.feedURL = feedURL
    }
}

/// What the range fetcher needs the first time it touches an item file.
public struct CacheFileRecord: Sendable, Equatable {
    public var source: CacheFileSource
    /// The origin version the file's cached bytes belong to, if any.
    public var validator: CacheValidator?
    /// The file's present (flushed and claimed) ranges.
    public var ranges: [Range<Int64>]
}

extension LibraryStore {
    /// The URLs of an item's files, its source's feed URL and the cache state of `file`; nil
    /// for an unknown item. This is on a reader's first open of a file, so it is one statement
    /// (a consistent snapshot by itself) run without an explicit transaction: after a while
    /// idle, each statement and transaction step costs tens of microseconds.
    public func cacheFileRecord(itemID: Int64, file: String) throws -> CacheFileRecord? {
        try readStatement { db in
            let row = try Row.fetchOne(db.cachedStatement(sql: """
                SELECT item.mediaURL, item.thumbnailURL, item.subtitles, source.feedURL,
                       validator.itemID, validator.etag, validator.lastModified, validator.totalSize,
                       (SELECT group_concat(range, ',') FROM
                           (SELECT start || '-' || "end" AS range FROM cacheRange
                            WHERE itemID = ?1 AND file = ?2 ORDER BY start))
                FROM item JOIN source ON source.id = item.sourceID
                LEFT JOIN cacheValidator AS validator ON validator.itemID = item.id AND validator.file = ?2
                WHERE item.id = ?1
                """), arguments: [itemID, file])
            return row.map(Self.cacheFileRecord(_:))
        }
    }

    private static func cacheFileRecord(_ row: Row) -> CacheFileRecord {
        let source = CacheFileSource(mediaURL: row[0], thumbnailURL: row[1],
                                     subtitles: (row[2] as String?).flatMap { JSONText.decode([SubtitleTrack].self, from: $0) } ?? [],
                                     feedURL: row[3])
        let hasValidator = !row.hasNull(atIndex: 4)  // a validator row may hold only NULLs
        let etag: String? = row[5], lastModified: String? = row[6], totalSize: Int64? = row[7]
        let ranges = ((row[8] as String?) ?? "").split(separator: ",").compactMap { text -> Range<Int64>? in
            let ends = text.split(separator: "-")
            guard ends.count == 2, let start = Int64(ends[0]), let end = Int64(ends[1]), start < end else { return nil }
            return start..<end
        }
        return CacheFileRecord(source: source,
                               validator: hasValidator ? CacheValidator(etag: etag, lastModified: lastModified, totalSize: totalSize) : nil,
                               ranges: ranges)
    }
}
