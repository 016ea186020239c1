import Foundation
internal import GRDB

extension LibraryStore {
    /// Every item a listing shows (those with a file name, tombstones left out) in listing
    /// order: source name, then title, then id, as `items(matching:)`; then the failed items
    /// with no file name (`ItemOutline.namedByContentID`). The mount builds its
    /// tree from these on every change, so only the listed columns are read.
    public func itemOutlines() throws -> [ItemOutline] {
        var outlines: [ItemOutline] = []
        try forEachItemOutline { outlines.append($0) }
        return outlines
    }

    /// Ids of the cached HLS items, which the mount may list as one file too: it asks the
    /// streams before its tree build reads the rows (by the state index: cached items only).
    public func cachedHLSItemIDs() throws -> [Int64] {
        try read { db in
            try Int64.fetchAll(db, sql: "SELECT id FROM item WHERE state = ? AND type = ?",
                               arguments: [ItemState.cached.rawValue, ItemType.hls.rawValue])
        }
    }

    /// `itemOutlines()` one at a time, in the same order, none kept: the mount's tree build
    /// holds the tree it replaces meanwhile, and 100,000 outlines at once were another ~18 MB.
    /// `body` runs inside one read of the store; it must not use the store.
    ///
    /// The query scans the table: with `fileName IS NOT NULL` free to use the file name's
    /// index, SQLite walked the index and looked up every row from it.
    ///
    /// The listing order is sorted by SQLite, past 1 MiB (about 8,000 items) in a temporary
    /// file (in `SQLITE_TMPDIR`, else `/var/tmp` or `/tmp`): sorted in memory, 100,000 items
    /// were 100,000 small blocks alive at once, left as holes in the mount's heap. When that
    /// file cannot be written (its folder full), the sort is done in memory instead.
    public func forEachItemOutline(_ body: (ItemOutline) throws -> Void) throws {
        try read { db in
            var delivered = false
            do {
                try forEachItemOutline(db, id: nil) { delivered = true; try body($0) }
            } catch let error as DatabaseError
                        where !delivered && [.SQLITE_FULL, .SQLITE_IOERR, .SQLITE_CANTOPEN].contains(error.resultCode) {
                try db.execute(sql: "PRAGMA temp_store = MEMORY")
                defer { try? db.execute(sql: "PRAGMA temp_store = DEFAULT") }
                try forEachItemOutline(db, id: nil, body)
            }
        }
    }

    /// The outline of one listed item with a file name, as `itemOutlines()` has it; nil when
    /// there is none. A point look-up (the primary key).
    public func itemOutline(id: Int64) throws -> ItemOutline? {
        var found: ItemOutline?
        try read { db in try forEachItemOutline(db, id: id) { found = $0 } }
        return found
    }

    /// The same by file name (by its UNIQUE index).
    public func itemOutline(fileName: String) throws -> ItemOutline? {
        var found: ItemOutline?
        try read { db in
            guard let id = try Int64.fetchOne(db, sql: "SELECT id FROM item WHERE fileName = ?", arguments: [fileName]) else { return }
            try forEachItemOutline(db, id: id) { found = $0 }
        }
        return found
    }

    /// Every outline, or with `id` that item's only (and none named by content id).
    private func forEachItemOutline(_ db: Database, id only: Int64?, _ body: (ItemOutline) throws -> Void) throws {
        let (types, states) = (Spellings(ItemType.allCases, \.rawValue), Spellings(ItemState.allCases, \.rawValue))
        // An integer: spelled into the SQL as it is.
        let onlyItem = only.map { " AND item.id = \($0)" } ?? ""
        // Links and subtitle tracks first, by item id (an SQL join would repeat every
        // item's columns per link). The links in key order in one flat table, found by
        // binary search: not a small array per item, all alive through the scan (100,000
        // blocks for a large catalog, left as holes among what the mount allocates meanwhile).
        var links = CategoryLinks()
        try SQLiteColumns.forEachRow(db, sql: "SELECT itemID, categoryID FROM itemCategory"
                                         + (only.map { " WHERE itemID = \($0)" } ?? "") + " ORDER BY itemID, categoryID") { row in
            links.append(itemID: row.int64(0), categoryID: row.int64(1))
        }
        // Tracks in catalog order: a subtitle file's number in the mount is its place in the list.
        // The column only ever holds what `JSONText` wrote; anything else counts as no tracks.
        var subtitles: [Int64: [SubtitleTrack]] = [:]
        try SQLiteColumns.forEachRow(db, sql: """
            SELECT item.id, json_extract(track.value, '$.language'), json_extract(track.value, '$.url'),
                   json_extract(track.value, '$.format'), json_extract(track.value, '$.size')
            FROM item, json_each(item.subtitles) AS track
            WHERE item.state <> 'deleted' AND item.fileName IS NOT NULL AND item.subtitles IS NOT NULL
                  AND json_valid(item.subtitles) AND json_type(item.subtitles) = 'array'\(onlyItem)
            ORDER BY item.id, track.key
            """) { row in
            guard let language = row.text(1), let url = row.text(2) else { return }
            subtitles[row.int64(0), default: []].append(SubtitleTrack(language: language, url: url, format: row.text(3),
                                                                      size: row.optionalInt64(4)))
        }
        try SQLiteColumns.forEachRow(db, sql: """
            SELECT item.id, item.sourceID, item.fileName, item.type, item.state, item.size, item.bytesPresent,
                   item.publishedAt, item.downloadedAt, item.addedAt, item.thumbnailURL IS NOT NULL, item.thumbnailSize,
                   item.watchedAt IS NOT NULL, item.lastPlayedAt, item.mediaChangedAt, item.sidesChangedAt
            FROM item JOIN source ON source.id = item.sourceID
            WHERE item.state <> 'deleted' AND +item.fileName IS NOT NULL\(onlyItem)
            ORDER BY source.name, item.title, item.id
            """) { row in
            let id = row.int64(0)
            var outline = ItemOutline(
                id: id, sourceID: row.int64(1), fileName: row.text(2) ?? "",
                type: row.value(3, spelledIn: types) ?? .file, state: row.value(4, spelledIn: states) ?? .failed,
                size: row.optionalInt64(5), bytesPresent: row.int64(6), publishedAt: row.date(7),
                downloadedAt: row.date(8), addedAt: row.date(9) ?? Date(timeIntervalSince1970: 0),
                hasThumbnail: row.bool(10), thumbnailSize: row.optionalInt64(11), subtitles: subtitles[id] ?? [],
                categoryIDs: links.categories(of: id))
            outline.watched = row.bool(12)
            outline.lastPlayedAt = row.date(13)
            outline.mediaChangedAt = row.date(14)
            outline.sidesChangedAt = row.date(15)
            try body(outline)
        }
        // Items whose lookup failed have no file name: listed by content id (by the state
        // index: failed items only).
        guard only == nil else { return }
        try SQLiteColumns.forEachRow(db, sql: """
            SELECT id, sourceID, contentID, type, size, bytesPresent, publishedAt, addedAt
            FROM item WHERE state = 'failed' AND fileName IS NULL ORDER BY id
            """) { row in
            var outline = ItemOutline(
                id: row.int64(0), sourceID: row.int64(1), fileName: FileNaming.contentIDName(row.text(2) ?? ""),
                type: row.value(3, spelledIn: types) ?? .file, state: .failed, size: row.optionalInt64(4),
                bytesPresent: row.int64(5), publishedAt: row.date(6), downloadedAt: nil,
                addedAt: row.date(7) ?? Date(timeIntervalSince1970: 0), hasThumbnail: false)
            outline.namedByContentID = true
            try body(outline)
        }
    }
}

/// Item–category links sorted by item id, as two flat arrays.
private struct CategoryLinks {
    private var itemIDs: [Int64] = []
    private var categoryIDs: [Int64] = []

    /// In `(itemID, categoryID)` order.
    mutating func append(itemID: Int64, categoryID: Int64) {
        itemIDs.append(itemID)
        categoryIDs.append(categoryID)
    }

    func categories(of itemID: Int64) -> [Int64] {
        var low = 0, high = itemIDs.count
        while low < high {
            let middle = (low + high) / 2
            if itemIDs[middle] < itemID { low = middle + 1 } else { high = middle }
        }
        var end = low
        while end < itemIDs.count, itemIDs[end] == itemID { end += 1 }
        return Array(categoryIDs[low..<end])
    }
}
