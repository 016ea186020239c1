import Foundation
internal import GRDB

extension LibraryStore {
    /// Every item a listing shows (those with a file name, tombstones left out) in listing
    /// order: source name, then title, then id, as `items(matching:)`. The mount builds its
    /// tree from these on every change, so only the listed columns are read.
    ///
    /// The query scans the table: with `fileName IS NOT NULL` free to use the file name's
    /// index, SQLite walked the index and looked up every row from it.
    public func itemOutlines() throws -> [ItemOutline] {
        let (types, states) = (Spellings(ItemType.allCases, \.rawValue), Spellings(ItemState.allCases, \.rawValue))
        return try read { db in
            var outlines: [ItemOutline] = []
            try SQLiteColumns.forEachRow(db, sql: """
                SELECT item.id, item.sourceID, item.fileName, item.type, item.state, item.size, item.bytesPresent,
                       item.publishedAt, item.downloadedAt, item.addedAt, item.thumbnailURL IS NOT NULL
                FROM item JOIN source ON source.id = item.sourceID
                WHERE item.state <> 'deleted' AND +item.fileName IS NOT NULL
                ORDER BY source.name, item.title, item.id
                """) { row in
                outlines.append(ItemOutline(
                    id: row.int64(0), sourceID: row.int64(1), fileName: row.text(2) ?? "",
                    type: row.value(3, spelledIn: types) ?? .file, state: row.value(4, spelledIn: states) ?? .failed,
                    size: row.optionalInt64(5), bytesPresent: row.int64(6), publishedAt: row.date(7),
                    downloadedAt: row.date(8), addedAt: row.date(9) ?? Date(timeIntervalSince1970: 0),
                    hasThumbnail: row.bool(10)))
            }
            // Links and subtitle tracks are joined here by item id (an SQL join would repeat
            // every item's columns per link).
            var positions: ItemPositions?
            func position(of id: Int64) -> Int? {
                if positions == nil { positions = ItemPositions(outlines.lazy.map(\.id)) }
                return positions![id]
            }
            try SQLiteColumns.forEachRow(db, sql: "SELECT itemID, categoryID FROM itemCategory") { row in
                if let index = position(of: row.int64(0)) { outlines[index].categoryIDs.append(row.int64(1)) }
            }
            // Tracks in catalog order: a subtitle file's number in the mount is its place in the list.
            // The column only ever holds what `JSONText` wrote; anything else counts as no tracks.
            try SQLiteColumns.forEachRow(db, sql: """
                SELECT item.id, json_extract(track.value, '$.language'), json_extract(track.value, '$.url'),
                       json_extract(track.value, '$.format')
                FROM item, json_each(item.subtitles) AS track
                WHERE item.state <> 'deleted' AND item.fileName IS NOT NULL AND item.subtitles IS NOT NULL
                      AND json_valid(item.subtitles) AND json_type(item.subtitles) = 'array'
                ORDER BY item.id, track.key
                """) { row in
                guard let index = position(of: row.int64(0)), let language = row.text(1), let url = row.text(2) else { return }
                outlines[index].subtitles.append(SubtitleTrack(language: language, url: url, format: row.text(3)))
            }
            return outlines
        }
    }
}

/// Item id → position in a list. Ids are handed out in order and rarely removed, so they
/// are usually dense: then an array indexed by id, else a dictionary.
struct ItemPositions {
    private var first: Int64 = 0
    private var dense: [Int32] = []
    private var sparse: [Int64: Int] = [:]

    init(_ ids: some Collection<Int64>) {
        guard let low = ids.min(), let high = ids.max() else { return }
        if high - low < Int64(ids.count) * 4 + 1024, ids.count < Int(Int32.max) {
            first = low
            dense = [Int32](repeating: -1, count: Int(high - low) + 1)
            for (position, id) in ids.enumerated() { dense[Int(id - low)] = Int32(position) }
        } else {
            sparse.reserveCapacity(ids.count)
            for (position, id) in ids.enumerated() { sparse[id] = position }
        }
    }

    subscript(id: Int64) -> Int? {
        guard !dense.isEmpty else { return sparse[id] }
        guard id >= first, id - first < Int64(dense.count) else { return nil }
        let position = dense[Int(id - first)]
        return position < 0 ? nil : Int(position)
    }
}
