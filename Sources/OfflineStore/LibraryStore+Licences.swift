import Foundation
internal import GRDB

extension LibraryStore {
    // MARK: - Licences

    public func licence(itemID: Int64) throws -> Licence? {
        try read { db in
            try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM licence WHERE itemID = ?"), arguments: [itemID])
                .map(Licence.init(row:))
        }
    }

    /// Inserts or replaces an item's licence (after acquisition, renewal or first play).
    /// - Throws: `.unknownItem`.
    public func putLicence(_ licence: Licence) throws {
        try write { db in
            guard try Self.fetchItem(db, id: licence.itemID) != nil else {
                throw StoreError(.unknownItem, "no item with id \(licence.itemID)")
            }
            try db.execute(sql: """
                INSERT OR REPLACE INTO licence
                    (itemID, kind, rentalDuration, playDuration, licenceURL, acquiredAt, firstPlayedAt, expiresAt, key)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [licence.itemID, licence.terms.kind.rawValue, licence.terms.rentalDuration,
                                 licence.terms.playDuration, licence.terms.licenceURL, licence.acquiredAt?.dbTime,
                                 licence.firstPlayedAt?.dbTime, licence.expiresAt?.dbTime, licence.key])
        }
    }

    // MARK: - HLS segments

    /// Replaces the segment list of an item (a new variant or a refreshed playlist).
    /// Presence flags of segments with the same sequence and URI are kept.
    public func putHLSSegments(itemID: Int64, _ segments: [HLSSegment]) throws {
        try write { db in
            guard try Self.fetchItem(db, id: itemID) != nil else {
                throw StoreError(.unknownItem, "no item with id \(itemID)")
            }
            var present = Set<Int64>()
            for row in try Row.fetchAll(db, sql: "SELECT sequence, uri FROM hlsSegment WHERE itemID = ? AND present = 1",
                                        arguments: [itemID]) {
                let sequence: Int64 = row[0], uri: String = row[1]
                if segments.contains(where: { $0.sequence == sequence && $0.uri == uri }) { present.insert(sequence) }
            }
            try db.execute(sql: "DELETE FROM hlsSegment WHERE itemID = ?", arguments: [itemID])
            let insert = try db.cachedStatement(sql: """
                INSERT OR REPLACE INTO hlsSegment
                    (itemID, sequence, uri, duration, byteRangeStart, byteRangeLength, size, present)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """)
            for s in segments {
                try insert.execute(arguments: [itemID, s.sequence, s.uri, s.duration, s.byteRangeStart, s.byteRangeLength,
                                               s.size, s.present || present.contains(s.sequence)])
            }
        }
    }

    /// Segments of an item, by sequence.
    public func hlsSegments(itemID: Int64) throws -> [HLSSegment] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM hlsSegment WHERE itemID = ? ORDER BY sequence", arguments: [itemID])
                .map(HLSSegment.init(row:))
        }
    }

    /// Marks one segment downloaded (after its bytes are flushed) or not, with its size.
    public func setHLSSegmentPresent(itemID: Int64, sequence: Int64, present: Bool, size: Int64? = nil) throws {
        try write { db in
            try db.execute(sql: "UPDATE hlsSegment SET present = ?, size = ifnull(?, size) WHERE itemID = ? AND sequence = ?",
                           arguments: [present, size, itemID, sequence])
        }
    }
}
