import Foundation
internal import GRDB

extension LibraryStore {
    /// Checks that `name` can name the `sources/<name>` folder: non-empty, no `/`, not `.`
    /// or `..`, no control characters, at most 255 bytes of UTF-8.
    public static func validateSourceName(_ name: String) throws(StoreError) {
        func invalid(_ why: String) -> StoreError {
            StoreError(.invalidSourceName, "invalid source name '\(name.debugDescription.dropFirst().dropLast())': \(why)")
        }
        if name.isEmpty { throw invalid("it is empty") }
        if name == "." || name == ".." { throw invalid("'.' and '..' are reserved") }
        if name.hasPrefix(".") { throw invalid("a name starting with '.' is a hidden folder, which ls and file managers do not show") }
        if name.first?.isWhitespace == true || name.last?.isWhitespace == true {
            throw invalid("it starts or ends with a space")
        }
        if name.contains("/") { throw invalid("it contains '/'") }
        if name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw invalid("it contains control characters")
        }
        if name.utf8.count > FileNaming.maxBytes { throw invalid("it is longer than 255 bytes") }
    }

    /// Adds a subscribed source. The feed URL is stored as given (the engine checks it).
    /// - Throws: `.invalidSourceName`, or `.duplicateSource` when the name is taken.
    @discardableResult
    public func addSource(name: String, feedURL: String) throws -> Source {
        try Self.validateSourceName(name)
        let now = clock()
        return try write { db in
            if try Bool.fetchOne(db, sql: "SELECT 1 FROM source WHERE name = ?", arguments: [name]) == true {
                throw StoreError(.duplicateSource, "a source named '\(name)' already exists")
            }
            try db.execute(sql: "INSERT INTO source (name, feedURL, subscribed, addedAt) VALUES (?, ?, 1, ?)",
                           arguments: [name, feedURL, now.dbTime])
            let id = db.lastInsertedRowID
            try insertEvent(db, kind: .source, itemID: nil, sourceID: id, message: "source \(name) added",
                            details: JSONText.encode(["feedURL": feedURL]), at: now)
            return try Self.fetchSource(db, id: id)!
        }
    }

    /// Removes a source with its items (and their ranges, segments, licences, links).
    /// - Returns: the ids of the removed items, so the engine can delete their cache files.
    /// - Throws: `.unknownSource`.
    @discardableResult
    public func removeSource(name: String) throws -> [Int64] {
        let now = clock()
        defer { catalogChanges.bump() }  // see `CatalogChanges`: once inside, once after
        return try write { db in
            let source = try Self.requireSource(db, name: name)
            catalogChanges.bump()
            let ids = try Int64.fetchAll(db, sql: "SELECT id FROM item WHERE sourceID = ? ORDER BY id", arguments: [source.id])
            try db.execute(sql: "DELETE FROM source WHERE id = ?", arguments: [source.id])
            try Self.forgetEmptyCategories(db)
            try insertEvent(db, kind: .source, itemID: nil, sourceID: source.id, message: "source \(name) removed",
                            details: JSONText.encode(["items": ids.count]), at: now)
            return ids
        }
    }

    /// Those of `ids` that name an item (cache folders left by items removed with their
    /// source, when the process ended between the two).
    public func existingItemIDs(among ids: [Int64]) throws -> Set<Int64> {
        try read { db in
            var found = Set<Int64>()
            for start in stride(from: 0, to: ids.count, by: 500) {
                let batch = ids[start..<min(ids.count, start + 500)].map(String.init).joined(separator: ",")
                found.formUnion(try Int64.fetchAll(db, sql: "SELECT id FROM item WHERE id IN (\(batch))"))
            }
            return found
        }
    }

    /// Every source, by name.
    public func sources() throws -> [Source] {
        try read { db in try Row.fetchAll(db, sql: "SELECT * FROM source ORDER BY name").map(Source.init(row:)) }
    }

    public func source(named name: String) throws -> Source? {
        try read { db in try Row.fetchOne(db, sql: "SELECT * FROM source WHERE name = ?", arguments: [name]).map(Source.init(row:)) }
    }

    public func source(id: Int64) throws -> Source? {
        try read { db in try Self.fetchSource(db, id: id) }
    }

    /// Subscribes or unsubscribes (an unsubscribed source is not synced).
    /// - Throws: `.unknownSource`.
    public func setSubscribed(name: String, _ subscribed: Bool) throws {
        let now = clock()
        try write { db in
            let source = try Self.requireSource(db, name: name)
            guard source.subscribed != subscribed else { return }
            try db.execute(sql: "UPDATE source SET subscribed = ? WHERE id = ?", arguments: [subscribed, source.id])
            try insertEvent(db, kind: .source, itemID: nil, sourceID: source.id,
                            message: "source \(name) \(subscribed ? "subscribed" : "unsubscribed")", details: nil, at: now)
        }
    }

    /// Records the outcome of a sync: validators for the next conditional request, the error
    /// (nil on success; a success clears the previous error) and when to sync next.
    public func recordSync(sourceID: Int64, etag: String?, lastModified: String?, error: String?, at time: Date,
                           nextSyncAt: Date? = nil) throws {
        try write { db in
            try db.execute(sql: """
                UPDATE source SET etag = ?, lastModified = ?, lastSyncError = ?, lastSyncAt = ?, nextSyncAt = ?
                WHERE id = ?
                """, arguments: [etag, lastModified, error, time.dbTime, nextSyncAt?.dbTime, sourceID])
            if db.changesCount == 0 { throw StoreError(.unknownSource, "no source with id \(sourceID)") }
            if let error {
                try insertEvent(db, kind: .error, itemID: nil, sourceID: sourceID, message: "sync failed: \(error)",
                                details: nil, at: time)
            }
        }
    }

    /// Points a source at another feed URL, keeping its items; the old validators no longer
    /// apply, so the next sync fetches the whole feed.
    /// - Throws: `.unknownSource`.
    public func setFeedURL(name: String, _ feedURL: String) throws {
        try write { db in
            let source = try Self.requireSource(db, name: name)
            try db.execute(sql: "UPDATE source SET feedURL = ?, etag = NULL, lastModified = NULL WHERE id = ?",
                           arguments: [feedURL, source.id])
            try db.execute(sql: "DELETE FROM catalogPage WHERE sourceID = ?", arguments: [source.id])
        }
    }

    /// Stores the feed format detected at sync.
    /// Records the feed's artwork URL (nil: it has none).
    public func setSourceImage(sourceID: Int64, _ url: String?) throws {
        let now = clock()
        try write { db in
            try db.execute(sql: """
                UPDATE source SET imageChangedAt = CASE WHEN imageURL IS NOT ?1 THEN ?2 ELSE imageChangedAt END,
                    imageURL = ?1
                WHERE id = ?3
                """, arguments: [url, now.dbTime, sourceID])
            if db.changesCount == 0 { throw StoreError(.unknownSource, "no source with id \(sourceID)") }
        }
    }

    public func setSourceKind(sourceID: Int64, _ kind: FeedKind) throws {
        try write { db in
            try db.execute(sql: "UPDATE source SET kind = ? WHERE id = ?", arguments: [kind.rawValue, sourceID])
            if db.changesCount == 0 { throw StoreError(.unknownSource, "no source with id \(sourceID)") }
        }
    }

    static func fetchSource(_ db: Database, id: Int64) throws -> Source? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM source WHERE id = ?"), arguments: [id]).map(Source.init(row:))
    }

    static func requireSource(_ db: Database, name: String) throws -> Source {
        guard let row = try Row.fetchOne(db, sql: "SELECT * FROM source WHERE name = ?", arguments: [name]) else {
            throw StoreError(.unknownSource, "no source named '\(name)'")
        }
        return Source(row: row)
    }
}
