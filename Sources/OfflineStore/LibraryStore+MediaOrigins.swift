import Foundation
internal import GRDB

extension LibraryStore {
    /// Calls `body` for every item with a media URL and no cache record of its media (no
    /// validator, no claimed range), in ascending id order, with its source's feed URL: for all
    /// such items at once, what `cacheFileRecord(itemID:file: "media")` reads for one. One scan;
    /// the rows are not kept, so the caller chooses how compactly to hold them.
    public func forEachUncachedMedia(_ body: (_ itemID: Int64, _ mediaURL: String, _ feedURL: String) -> Void) throws {
        try read { db in
            let rows = try Row.fetchCursor(db, sql: """
                SELECT item.id, item.mediaURL, source.feedURL FROM item JOIN source ON source.id = item.sourceID
                WHERE item.mediaURL IS NOT NULL
                  AND NOT EXISTS (SELECT 1 FROM cacheValidator WHERE itemID = item.id AND file = 'media')
                  AND NOT EXISTS (SELECT 1 FROM cacheRange WHERE itemID = item.id AND file = 'media')
                ORDER BY item.id
                """)
            while let row = try rows.next() {
                body(row[0], row[1], row[2])
            }
        }
    }
}
