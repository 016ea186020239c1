import Foundation
internal import GRDB

extension LibraryStore {
    // MARK: - Licences

    /// When each item's licence expires, for items whose licence has an expiry (the mount's
    /// tree keeps it, so an open checks it without a store read).
    public func licenceExpiries() throws -> [Int64: Date] {
        try read { db in
            var expiries: [Int64: Date] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT itemID, expiresAt FROM licence WHERE expiresAt IS NOT NULL") {
                let itemID: Int64 = row[0]
                expiries[itemID] = Date(dbTime: row[1])
            }
            return expiries
        }
    }

    /// Every licence, by item: for a listing of many items (one query, not one per item).
    public func licences() throws -> [Int64: Licence] {
        try read { db in
            var licences: [Int64: Licence] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT * FROM licence") {
                let licence = Licence(row: row)
                licences[licence.itemID] = licence
            }
            return licences
        }
    }

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
}
