internal import GRDB

/// A side file some item has cached whole: the cache file another item with the same URL
/// can link instead of fetching.
public struct WholeSideFile: Sendable, Equatable {
    public var itemID: Int64
    public var file: String
    public var validator: CacheValidator
    public var size: Int64
}

/// Side files shared by URL. Feeds often give many items one image (a podcast's artwork on
/// every episode): it is fetched once, and each item's cache file is a hard link to it.
extension LibraryStore {
    /// A whole cached copy of `url`'s bytes held by an item other than `itemID`, if any.
    public func wholeSideFile(url: String, excludingItem itemID: Int64) throws -> WholeSideFile? {
        try readStatement { db in
            let row = try Row.fetchOne(db.cachedStatement(sql: """
                SELECT v.itemID, v.file, v.etag, v.lastModified, v.totalSize FROM cacheValidator AS v
                WHERE v.url = ?1 AND v.itemID <> ?2 AND v.totalSize > 0
                  AND (SELECT sum("end" - start) FROM cacheRange AS r
                       WHERE r.itemID = v.itemID AND r.file = v.file) = v.totalSize
                LIMIT 1
                """), arguments: [url, itemID])
            return row.map { row in
                WholeSideFile(itemID: row[0], file: row[1],
                              validator: CacheValidator(etag: row[2], lastModified: row[3], totalSize: row[4]),
                              size: row[4])
            }
        }
    }

    /// Claims all of `copy`'s bytes for `file` of `itemID`, whose cache file now links
    /// `copy`'s, in one transaction. False when the item is gone.
    public func adoptWholeSideFile(itemID: Int64, file: String, url: String, copy: WholeSideFile) throws -> Bool {
        try write { db in
            try db.execute(sql: "DELETE FROM cacheRange WHERE itemID = ? AND file = ?", arguments: [itemID, file])
            return try Self.commit(db, CacheCommit(itemID: itemID, file: file, ranges: [0..<copy.size],
                                                   validator: copy.validator, url: url))
        }
    }
}
