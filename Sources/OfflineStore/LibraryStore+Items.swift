import Foundation
internal import GRDB

extension LibraryStore {
    /// Items matching `filter` with their source name and category paths, ordered by source
    /// name, then title, then id.
    public func items(matching filter: ItemFilter = .all) throws -> [ItemListing] {
        try read { db in
            let categories = try Self.fetchCategories(db)
            guard let query = Self.itemQuery(filter, categories: categories) else { return [] }
            let rows = try Row.fetchAll(db, sql: """
                SELECT \(Item.columns), source.name AS sourceName FROM item JOIN source ON source.id = item.sourceID
                \(query.whereClause) ORDER BY source.name, item.title, item.id
                """, arguments: query.arguments)
            let paths = try Self.categoryPathsByItem(db, categories: categories, itemIDs: rows.count < 500 ? rows.map { $0[0] } : nil)
            return rows.map { row in
                let item = Item(row: row)
                return ItemListing(item: item, sourceName: row[Item.columnCount], categoryPaths: paths[item.id] ?? [])
            }
        }
    }

    /// The ids of the items `items(matching:)` lists, in its order: what a listing that
    /// prints as it reads pages through (`items(ids:)`), holding 8 bytes per item.
    public func itemIDs(matching filter: ItemFilter = .all) throws -> [Int64] {
        try read { db in
            guard let query = Self.itemQuery(filter, categories: try Self.fetchCategories(db)) else { return [] }
            return try Int64.fetchAll(db, sql: """
                SELECT item.id FROM item JOIN source ON source.id = item.sourceID
                \(query.whereClause) ORDER BY source.name, item.title, item.id
                """, arguments: query.arguments)
        }
    }

    /// The listings of `ids` with their licences, in the order of `ids`; ids no longer in the
    /// library are left out.
    public func items(ids: [Int64]) throws -> [(listing: ItemListing, licence: Licence?)] {
        guard !ids.isEmpty else { return [] }
        return try read { db in
            let list = ids.map(String.init).joined(separator: ",")
            var listings: [Int64: ItemListing] = [:]
            let rows = try Row.fetchCursor(db, sql: """
                SELECT \(Item.columns), source.name AS sourceName FROM item JOIN source ON source.id = item.sourceID
                WHERE item.id IN (\(list))
                """)
            let paths = try Self.categoryPathsByItem(db, categories: Self.fetchCategories(db), itemIDs: ids)
            while let row = try rows.next() {
                let item = Item(row: row)
                listings[item.id] = ItemListing(item: item, sourceName: row[Item.columnCount], categoryPaths: paths[item.id] ?? [])
            }
            var licences: [Int64: Licence] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT * FROM licence WHERE itemID IN (\(list))") {
                let licence = Licence(row: row)
                licences[licence.itemID] = licence
            }
            return ids.compactMap { id in listings[id].map { ($0, licences[id]) } }
        }
    }

    /// The WHERE clause of a listing; nil when nothing can match (an unknown category).
    private static func itemQuery(_ filter: ItemFilter, categories: [Category])
        -> (whereClause: String, arguments: StatementArguments)? {
        var conditions: [String] = []
        var values: [(any DatabaseValueConvertible)?] = []
        if let names = filter.sources {
            conditions.append("source.name IN (\(names.map { _ in "?" }.joined(separator: ", ")))")
            values.append(contentsOf: names)
        }
        if let state = filter.state {
            conditions.append("item.state = ?")
            values.append(state.rawValue)
        } else if !filter.includeDeleted {
            conditions.append("item.state <> 'deleted'")
        }
        if let states = filter.states {
            conditions.append("item.state IN (\(states.map { _ in "?" }.joined(separator: ", ")))")
            values.append(contentsOf: states.map(\.rawValue))
        }
        if let paths = filter.categoryPaths {
            // The categories and every descendant, resolved in memory (the tree is small).
            let roots = categories.filter { paths.contains($0.path) }
            guard !roots.isEmpty else { return nil }
            let ids = categories.filter { category in roots.contains { category.path.starts(with: $0.path) } }.map(\.id)
            conditions.append("item.id IN (SELECT itemID FROM itemCategory WHERE categoryID IN (\(ids.map(String.init).joined(separator: ","))))")
        }
        let whereClause = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        return (whereClause, StatementArguments(values))
    }

    public func item(id: Int64) throws -> Item? {
        try read { db in try Self.fetchItem(db, id: id) }
    }

    /// The item of `source` (by name) with `contentID`.
    public func item(source: String, contentID: String) throws -> Item? {
        try read { db in
            try Row.fetchOne(db, sql: """
                SELECT \(Item.columns) FROM item JOIN source ON source.id = item.sourceID
                WHERE source.name = ? AND item.contentID = ?
                """, arguments: [source, contentID]).map(Item.init(row:))
        }
    }

    /// The item whose file is named `fileName` (unique library-wide).
    public func item(fileName: String) throws -> Item? {
        try read { db in
            try Row.fetchOne(db, sql: "SELECT \(Item.columns) FROM item WHERE fileName = ?", arguments: [fileName]).map(Item.init(row:))
        }
    }

    /// Category name paths of one item, sorted.
    public func categoryPaths(itemID: Int64) throws -> [[String]] {
        try read { db in
            try Self.categoryPathsByItem(db, categories: Self.fetchCategories(db), itemIDs: [itemID])[itemID] ?? []
        }
    }

    /// Sets an item's state (and error: pass nil to clear it) and logs a `state` event when
    /// the state or error changes.
    /// - Returns: the updated item.
    /// - Throws: `.unknownItem`.
    @discardableResult
    ///
    /// `onlyFrom`: change nothing unless the item is still in that state. For a decision made
    /// on an earlier read of the item (the scheduler's), which a command may have overtaken
    /// meanwhile (a `pause` must not be undone by a policy wait decided just before it).
    public func setState(itemID: Int64, state: ItemState, error: ItemErrorCode? = nil, detail: String? = nil,
                         onlyFrom: ItemState? = nil) throws -> Item {
        let now = clock()
        return try write { db in
            guard let old = try Self.fetchItem(db, id: itemID) else {
                throw StoreError(.unknownItem, "no item with id \(itemID)")
            }
            if let onlyFrom, old.state != onlyFrom { return old }
            return try change(db, old, to: state, error: error, detail: detail, at: now)
        }
    }

    /// Marks a wholly fetched item `cached`, with its size and completion time, in one
    /// transaction and only while the store still claims `size` bytes of its media: an
    /// eviction that cleared them first (of an item streamed whole, as its completion is
    /// verified) wins. Returns whether it did.
    public func markCached(itemID: Int64, size: Int64, at time: Date) throws -> Bool {
        let now = clock()
        return try write { db in
            let present = try Int64.fetchOne(db, sql: #"SELECT ifnull(sum("end" - start), 0) FROM cacheRange WHERE itemID = ? AND file = 'media'"#,
                                             arguments: [itemID]) ?? 0
            guard present == size, let old = try Self.fetchItem(db, id: itemID) else { return false }
            try db.execute(sql: "UPDATE item SET size = ?, downloadedAt = ? WHERE id = ?", arguments: [size, time.dbTime, itemID])
            try change(db, old, to: .cached, error: nil, detail: nil, at: now)
            return true
        }
    }

    /// `setState`'s change, in the caller's transaction.
    @discardableResult
    private func change(_ db: Database, _ old: Item, to state: ItemState, error: ItemErrorCode?, detail: String?,
                        at now: Date) throws -> Item {
        try db.execute(sql: "UPDATE item SET state = ?, error = ?, errorDetail = ?, updatedAt = ? WHERE id = ?",
                       arguments: [state.rawValue, error?.rawValue, detail, now.dbTime, old.id])
        if old.state != state || old.error != error {
            var details = ["from": old.state.rawValue, "to": state.rawValue]
            if let error { details["error"] = error.rawValue }
            if let detail { details["detail"] = detail }
            let suffix = error.map { " (\($0.rawValue))" } ?? ""
            try insertEvent(db, kind: .state, itemID: old.id, sourceID: old.sourceID,
                            message: "\(old.fileName ?? old.contentID): \(old.state.rawValue) → \(state.rawValue)\(suffix)",
                            details: JSONText.encode(details), at: now)
        }
        return try Self.fetchItem(db, id: old.id)!
    }

    /// Marks an item as asked for by the user (or not), with its request options.
    /// `quality` and `audio` (HLS) replace the stored choice only when given: a later request
    /// without them keeps it, so it fetches nothing again (`resetHLSChoice` goes back to the
    /// default). `partialSeconds` always replaces: a request without it asks for the whole.
    public func setRequested(itemID: Int64, _ requested: Bool, quality: String? = nil, audio: String? = nil,
                             partialSeconds: Double? = nil) throws {
        // A wish keeps the time it was made while it stands.
        try updateItem(itemID, """
            requestedAt = CASE WHEN ?1 = 0 THEN NULL WHEN requested = 1 AND requestedAt IS NOT NULL THEN requestedAt ELSE ?5 END,
            requested = ?1, quality = coalesce(?2, quality), audioLanguages = coalesce(?3, audioLanguages), partialSeconds = ?4
            """, [requested, quality, audio, partialSeconds, clock().dbTime])
    }

    /// Goes back to the default HLS choice: the highest quality the policies allow
    /// (`quality=auto`), the default audio only (`audio=default`).
    public func resetHLSChoice(itemID: Int64, quality: Bool, audio: Bool) throws {
        var assignments: [String] = []
        if quality { assignments.append("quality = NULL") }
        if audio { assignments.append("audioLanguages = NULL") }
        guard !assignments.isEmpty else { return }
        try updateItem(itemID, assignments.joined(separator: ", "), [])
    }

    /// Pins or unpins an item against eviction.
    public func setLocked(itemID: Int64, _ locked: Bool) throws {
        try updateItem(itemID, "locked = ?", [locked])
    }

    /// Records completion time (the file's mtime in the mount).
    public func setDownloaded(itemID: Int64, at time: Date?) throws {
        try updateItem(itemID, "downloadedAt = ?", [time?.dbTime])
    }

    /// Records the last read (LRU eviction order).
    public func setLastAccess(itemID: Int64, at time: Date) throws {
        try updateItem(itemID, "lastAccessAt = ?", [time.dbTime])
    }

    /// Corrects the size (from a HEAD request or a download that found it wrong).
    public func setSize(itemID: Int64, _ size: Int64?) throws {
        try updateItem(itemID, "size = ?", [size])
    }

    /// Inserts an item known only by content id (`download source/id` before any sync),
    /// in `metadata-pending`, requested. It gets its file name at the merge that brings its
    /// metadata. Returns the existing item when the content id is already known.
    @discardableResult
    public func addPendingItem(sourceID: Int64, contentID: String) throws -> Item {
        let now = clock()
        return try write { db in
            if let row = try Row.fetchOne(db, sql: "SELECT \(Item.columns) FROM item WHERE sourceID = ? AND contentID = ?",
                                          arguments: [sourceID, contentID]) {
                return Item(row: row)
            }
            guard try Self.fetchSource(db, id: sourceID) != nil else {
                throw StoreError(.unknownSource, "no source with id \(sourceID)")
            }
            try db.execute(sql: """
                INSERT INTO item (sourceID, contentID, title, type, state, requested, addedAt, updatedAt, inCatalog)
                VALUES (?, ?, ?, 'file', 'metadata-pending', 1, ?, ?, 0)
                """, arguments: [sourceID, contentID, contentID, now.dbTime, now.dbTime])
            let id = db.lastInsertedRowID
            try insertEvent(db, kind: .state, itemID: id, sourceID: sourceID, message: "\(contentID): metadata-pending",
                            details: nil, at: now)
            return try Self.fetchItem(db, id: id)!
        }
    }

    // MARK: - Categories

    /// Every category with its name and folder paths, ordered by path.
    public func categories() throws -> [Category] {
        try read { db in try Self.fetchCategories(db) }
    }

    static func fetchCategories(_ db: Database) throws -> [Category] {
        let rows = try Row.fetchAll(db, sql: "SELECT id, name, parentID, folderName FROM category")
        var byID: [Int64: (name: String, parent: Int64?, folder: String)] = [:]
        for row in rows { byID[row["id"]] = (row["name"], row["parentID"], row["folderName"]) }
        var result: [Category] = []
        result.reserveCapacity(rows.count)
        for (id, entry) in byID {
            var path = [entry.name], folders = [entry.folder]
            var parent = entry.parent
            var guardCount = 0 // a cycle cannot be stored through the API; stop anyway
            while let p = parent, let up = byID[p], guardCount < 64 {
                path.insert(up.name, at: 0)
                folders.insert(up.folder, at: 0)
                parent = up.parent
                guardCount += 1
            }
            result.append(Category(id: id, name: entry.name, parentID: entry.parent, folderName: entry.folder,
                                   path: path, folderPath: folders))
        }
        return result.sorted { $0.path.lexicographicallyPrecedes($1.path) }
    }

    /// itemID → sorted category paths; all items when `itemIDs` is nil.
    static func categoryPathsByItem(_ db: Database, categories: [Category], itemIDs: [Int64]?) throws -> [Int64: [[String]]] {
        let paths = Dictionary(uniqueKeysWithValues: categories.map { ($0.id, $0.path) })
        var result: [Int64: [[String]]] = [:]
        let sql: String
        if let itemIDs {
            if itemIDs.isEmpty { return [:] }
            sql = "SELECT itemID, categoryID FROM itemCategory WHERE itemID IN (\(itemIDs.map(String.init).joined(separator: ",")))"
        } else {
            sql = "SELECT itemID, categoryID FROM itemCategory"
        }
        let cursor = try Row.fetchCursor(db, sql: sql)
        while let row = try cursor.next() {
            if let path = paths[row[1]] { result[row[0], default: []].append(path) }
        }
        for key in result.keys { result[key]!.sort { $0.lexicographicallyPrecedes($1) } }
        return result
    }

    static func fetchItem(_ db: Database, id: Int64) throws -> Item? {
        // Cached statements (here and in the other look-ups a reader's first open and read
        // make): compiling the SQL again each time cost more than running it.
        try Row.fetchOne(db.cachedStatement(sql: "SELECT \(Item.columns) FROM item WHERE id = ?"), arguments: [id]).map(Item.init(row:))
    }

    private func updateItem(_ id: Int64, _ assignments: String, _ values: [(any DatabaseValueConvertible)?]) throws {
        let now = clock()
        try write { db in
            try db.execute(sql: "UPDATE item SET \(assignments), updatedAt = ? WHERE id = ?",
                           arguments: StatementArguments(values + [now.dbTime, id]))
            if db.changesCount == 0 { throw StoreError(.unknownItem, "no item with id \(id)") }
        }
    }
}

extension LibraryStore {
    /// Records the size a side file (`thumbnail`, `subtitle.<language>`) turned out to have
    /// when fetched, where the catalog or the sync said otherwise: listings and copies then
    /// use it, and the mount's next tree tells the kernel. Returns whether anything changed.
    @discardableResult
    public func correctSideFileSize(itemID: Int64, file: String, _ size: Int64) throws -> Bool {
        let now = clock()
        return try write { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT thumbnailSize, subtitles FROM item WHERE id = ?",
                                             arguments: [itemID]) else { return false }
            if file == "thumbnail" {
                guard (row["thumbnailSize"] as Int64?) != size else { return false }
                try db.execute(sql: "UPDATE item SET thumbnailSize = ?, updatedAt = ? WHERE id = ?",
                               arguments: [size, now.dbTime, itemID])
                return true
            }
            guard file.hasPrefix("subtitle."),
                  var tracks = JSONText.decode([SubtitleTrack].self, from: row["subtitles"]) else { return false }
            let language = String(file.dropFirst("subtitle.".count))
            guard let index = tracks.firstIndex(where: { $0.language == language }), tracks[index].size != size else { return false }
            tracks[index].size = size
            try db.execute(sql: "UPDATE item SET subtitles = ?, updatedAt = ? WHERE id = ?",
                           arguments: [JSONText.encode(tracks), now.dbTime, itemID])
            return true
        }
    }
}
