import Foundation
internal import GRDB

extension LibraryStore {
    /// Records the rendition chosen for an HLS item, replacing an earlier choice.
    /// - Throws: `.unknownItem`.
    public func putHLSStream(_ record: HLSStreamRecord) throws {
        try write { db in
            guard try Self.fetchItem(db, id: record.itemID) != nil else {
                throw StoreError(.unknownItem, "no item with id \(record.itemID)")
            }
            try db.execute(sql: """
                INSERT OR REPLACE INTO hlsStream
                    (itemID, playlistURL, playlist, quality, bandwidth, resolution, codecs, estimatedSize, renditions, chosenAt,
                     audioLanguages, variants)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [record.itemID, record.playlistURL, record.playlist, record.quality, record.bandwidth,
                                 record.resolution, record.codecs, record.estimatedSize,
                                 record.renditions.isEmpty ? nil : try JSONEncoder().encode(record.renditions),
                                 record.chosenAt.dbTime, record.audioLanguages,
                                 record.variants.isEmpty ? nil : try JSONEncoder().encode(record.variants)])
        }
    }

    /// The rendition chosen for an HLS item, if one was.
    public func hlsStream(itemID: Int64) throws -> HLSStreamRecord? {
        try read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM hlsStream WHERE itemID = ?", arguments: [itemID]).map { row in
                let renditions: Data? = row["renditions"], variants: Data? = row["variants"]
                return HLSStreamRecord(
                    itemID: row["itemID"], playlistURL: row["playlistURL"], playlist: row["playlist"],
                    quality: row["quality"], bandwidth: row["bandwidth"], resolution: row["resolution"],
                    codecs: row["codecs"], estimatedSize: row["estimatedSize"],
                    renditions: try renditions.map { try JSONDecoder().decode([HLSRenditionRecord].self, from: $0) } ?? [],
                    audioLanguages: row["audioLanguages"],
                    variants: try variants.map { try JSONDecoder().decode([HLSVariantRecord].self, from: $0) } ?? [],
                    chosenAt: Date(dbTime: row["chosenAt"]) ?? Date(timeIntervalSince1970: 0))
            }
        }
    }

    /// The items that have a chosen rendition.
    public func hlsStreamItemIDs() throws -> Set<Int64> {
        try read { db in Set(try Int64.fetchAll(db, sql: "SELECT itemID FROM hlsStream")) }
    }

    /// Forgets an HLS item's chosen rendition (its cached files go separately).
    public func removeHLSStream(itemID: Int64) throws {
        try write { db in try db.execute(sql: "DELETE FROM hlsStream WHERE itemID = ?", arguments: [itemID]) }
    }

    /// Sets the content key of an item's licence (an HLS key fetched from the playlist's
    /// `EXT-X-KEY` URI is kept with the licence, and served only while it is valid).
    public func setLicenceKey(itemID: Int64, _ key: Data?) throws {
        try write { db in
            try db.execute(sql: "UPDATE licence SET key = ? WHERE itemID = ?", arguments: [key, itemID])
        }
    }

    /// The cache file keys of an item that hold media (every file but the thumbnail and
    /// subtitles) and have claimed bytes.
    public func mediaFileKeys(itemID: Int64) throws -> [String] {
        try read { db in
            try String.fetchAll(db, sql: "SELECT DISTINCT file FROM cacheRange WHERE itemID = ? ORDER BY file", arguments: [itemID])
                .filter(Self.countsTowardMedia)
        }
    }
}

extension LibraryStore {
    /// Every cache file of an item with its claimed ranges and known size, in one read (the
    /// segment count of an HLS item's progress).
    public func cacheStates(itemID: Int64) throws -> [String: (totalSize: Int64?, ranges: [Range<Int64>])] {
        try read { db in
            var states: [String: (totalSize: Int64?, ranges: [Range<Int64>])] = [:]
            for row in try Row.fetchAll(db, sql: #"SELECT file, start, "end" FROM cacheRange WHERE itemID = ? ORDER BY file, start"#,
                                        arguments: [itemID]) {
                let file: String = row[0], start: Int64 = row[1], end: Int64 = row[2]
                states[file, default: (nil, [])].ranges.append(start..<end)
            }
            for row in try Row.fetchAll(db, sql: "SELECT file, totalSize FROM cacheValidator WHERE itemID = ?", arguments: [itemID]) {
                let file: String = row[0]
                states[file, default: (nil, [])].totalSize = row[1]
            }
            return states
        }
    }
}

extension LibraryStore {
    /// The source's HLS items in the catalog that have a playlist URL but no chosen rendition
    /// yet: what a sync prepares (`HLSPreparation`).
    public func hlsItemsWithoutStream(sourceID: Int64) throws -> [Int64] {
        try read { db in try Int64.fetchAll(db, sql: Self.hlsItemsWithoutStreamSQL, arguments: [sourceID]) }
    }

    /// Asked at every sync: through `item_hls` it reads the source's HLS items only.
    static let hlsItemsWithoutStreamSQL = """
        SELECT id FROM item
        WHERE sourceID = ? AND type = 'hls' AND state <> 'deleted' AND mediaURL IS NOT NULL
            AND id NOT IN (SELECT itemID FROM hlsStream)
        ORDER BY id
        """
}
