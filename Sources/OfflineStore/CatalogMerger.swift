import Foundation
internal import GRDB

/// What a merge carries from one page's transaction to the next: the report so far and the
/// items the catalog listed, by id (a duplicate listing is skipped: the first one wins; items
/// not listed leave at the end).
struct MergeProgress {
    var report = MergeReport()
    var seen = Set<Int64>()
    /// The items the page being merged lists, duplicates of earlier pages' included, in order:
    /// what a `304` for that page will stand for (`CatalogPage`).
    var pageIDs: [Int64] = []
}

/// Merges catalog entries into the items of a source, inside the caller's transaction.
///
/// Looks up each entry's item (and a new name's uniqueness) through the store's unique
/// indexes with cached statements rather than loading the source into memory, so that a
/// sync can merge a catalog of any size page by page with memory bounded by the page.
struct CatalogMerger {
    /// The metadata columns the catalog owns, in a form that compares like the stored values.
    struct Metadata: Equatable {
        var title: String
        var type: String
        var mediaURL: String?
        var size: Int64?
        var mimeType: String?
        var duration: Double?
        var publishedAt: Double?
        var summary: String?
        var thumbnailURL: String?
        var subtitles: String?
        var sha256: String?
        var thumbnailSize: Int64?

        init(_ e: CatalogEntry) {
            title = Self.withoutNUL(e.title)
            type = e.type.rawValue
            mediaURL = e.mediaURL
            size = e.size
            mimeType = e.mimeType
            duration = e.duration
            publishedAt = e.publishedAt?.dbTime
            summary = e.summary.map(Self.withoutNUL)
            thumbnailURL = e.thumbnailURL
            subtitles = e.subtitles.isEmpty ? nil : JSONText.encode(e.subtitles)
            sha256 = e.sha256
            thumbnailSize = e.thumbnailSize.flatMap { $0 >= 0 ? $0 : nil }
        }

        /// SQLite keeps a NUL in text, but text read back ends at it: a NUL becomes a space,
        /// as in the file name.
        static func withoutNUL(_ text: String) -> String {
            text.utf8.contains(0) ? text.replacingOccurrences(of: "\0", with: " ") : text
        }

        init(columns c: SQLiteColumns) {
            title = c.text(1) ?? ""; type = c.text(2) ?? ""; mediaURL = c.text(3); size = c.optionalInt64(4)
            mimeType = c.text(5); duration = c.optionalDouble(6); publishedAt = c.optionalDouble(7)
            summary = c.text(8); thumbnailURL = c.text(9); subtitles = c.text(10); sha256 = c.text(11)
            thumbnailSize = c.optionalInt64(15)
        }

        /// Another checksum: other bytes, whatever the URL and size say.
        func namesOtherBytes(than old: Metadata) -> Bool {
            sha256 != nil && old.sha256 != nil && sha256?.lowercased() != old.sha256?.lowercased()
        }

        /// What an item's side files are made of (`.nfo`, picture, subtitles) differs.
        func changesSideFiles(from old: Metadata) -> Bool {
            title != old.title || type != old.type || duration != old.duration || publishedAt != old.publishedAt
                || summary != old.summary || thumbnailURL != old.thumbnailURL || subtitles != old.subtitles
        }

        var arguments: [(any DatabaseValueConvertible)?] {
            [title, type, mediaURL, size, mimeType, duration, publishedAt, summary, thumbnailURL, subtitles, sha256, thumbnailSize]
        }
    }

    struct Existing {
        var id: Int64
        var metadata: Metadata
        var state: ItemState
        var fileName: String?
        var inCatalog: Bool
        /// The size the feed stated at the last merge (`metadata.size` may be the origin's).
        var feedSize: Int64?

        init(columns c: SQLiteColumns) {
            id = c.int64(0)
            metadata = Metadata(columns: c)
            state = c.text(12).flatMap(ItemState.init(rawValue:)) ?? .failed
            fileName = c.text(13)
            inCatalog = c.bool(14)
            feedSize = c.optionalInt64(16)
        }
    }

    let db: Database
    let sourceID: Int64
    let now: Double
    private var categoryByKey: [CategoryKey: Int64] = [:]
    private var folderNames: [Int64: Set<String>] = [:] // parent (0 = root) → taken folder names
    /// Raw category path → id: feeds repeat the same few paths on every item, and
    /// normalizing names costs more than the lookup.
    private var pathCache: [[String]: Int64] = [:]
    private let find: SQLiteProbe
    private let nameTaken: SQLiteProbe
    private let originSize: SQLiteProbe
    private let linksOf: Statement
    private let licenceOf: Statement
    private let insertLink: Statement
    private let deleteLink: Statement

    struct CategoryKey: Hashable {
        var parent: Int64
        var name: String
    }

    init(db: Database, sourceID: Int64, now: Date) throws {
        self.db = db
        self.sourceID = sourceID
        self.now = now.dbTime
        // `contentID = ?` compares bytes, as the UNIQUE index does: content ids are opaque, and
        // NFC/NFD twins are two items.
        find = try SQLiteProbe(db, sql: """
            SELECT id, title, type, mediaURL, size, mimeType, duration, publishedAt, summary,
                   thumbnailURL, subtitles, sha256, state, fileName, inCatalog, thumbnailSize, feedSize
            FROM item WHERE sourceID = ? AND contentID = ?
            """)
        nameTaken = try SQLiteProbe(db, sql: "SELECT 1 FROM item WHERE fileName = ?")
        originSize = try SQLiteProbe(db, sql: "SELECT totalSize FROM cacheValidator WHERE itemID = ? AND file = 'media'")
        linksOf = try db.cachedStatement(sql: "SELECT categoryID FROM itemCategory WHERE itemID = ?")
        licenceOf = try db.cachedStatement(sql: "SELECT * FROM licence WHERE itemID = ?")
        insertLink = try db.cachedStatement(sql: "INSERT INTO itemCategory (itemID, categoryID) VALUES (?, ?)")
        deleteLink = try db.cachedStatement(sql: "DELETE FROM itemCategory WHERE itemID = ? AND categoryID = ?")
        for row in try Row.fetchAll(db, sql: "SELECT id, ifnull(parentID, 0), name, folderName FROM category") {
            let parent: Int64 = row[1]
            categoryByKey[CategoryKey(parent: parent, name: row[2])] = row[0]
            folderNames[parent, default: []].insert(row[3])
        }
    }

    /// Merges one page of the catalog; `progress.report.discovered` takes the first new items.
    ///
    /// The schema's CHECK constraints are not evaluated meanwhile: SQLite builds a temporary
    /// b-tree for each `x IN (…)` list on every row it checks, which was half of an item
    /// insert's time. What a merge writes meets them by construction (types, states and
    /// licence kinds are Swift enums; a negative thumbnail size is dropped in `Metadata`).
    mutating func merge(_ entries: [CatalogEntry], into progress: inout MergeProgress) throws {
        try db.execute(sql: "PRAGMA ignore_check_constraints = ON")
        let merged = Result { try mergeUnchecked(entries, into: &progress) }
        // Later writes on this connection are checked again: failing to restore fails the merge.
        try db.execute(sql: "PRAGMA ignore_check_constraints = OFF")
        try merged.get()
    }

    private mutating func mergeUnchecked(_ entries: [CatalogEntry], into progress: inout MergeProgress) throws {
        let insert = try db.cachedStatement(sql: """
            INSERT INTO item (sourceID, title, type, mediaURL, size, mimeType, duration, publishedAt, summary,
                              thumbnailURL, subtitles, sha256, thumbnailSize, contentID, fileName, state, addedAt, updatedAt,
                              inCatalog, feedSize)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'discovered', ?, ?, 1, ?)
            """)
        let update = try db.cachedStatement(sql: """
            UPDATE item SET title = ?, type = ?, mediaURL = ?, size = ?, mimeType = ?, duration = ?, publishedAt = ?,
                summary = ?, thumbnailURL = ?, subtitles = ?, sha256 = ?, thumbnailSize = ?, fileName = ?, inCatalog = 1,
                updatedAt = ?, feedSize = ?,
                mediaChangedAt = CASE WHEN ? THEN ?14 ELSE mediaChangedAt END,
                sidesChangedAt = CASE WHEN ? THEN ?14 ELSE sidesChangedAt END
            WHERE id = ?
            """)

        for entry in entries where !entry.contentID.isEmpty {
            var metadata = Metadata(entry)
            if var old = try find.firstRow(.integer(sourceID), .text(entry.contentID), body: Existing.init(columns:)) {
                progress.pageIDs.append(old.id)
                guard progress.seen.insert(old.id).inserted else { continue } // first listing wins
                let (feedSize, replaced) = try size(of: &metadata, old: old)
                if replaced { progress.report.replacedMediaItemIDs.append(old.id) }
                let categories = try categoryIDs(for: entry.categoryPaths)
                var changed = false
                if old.metadata != metadata || !old.inCatalog || old.fileName == nil || old.feedSize != feedSize {
                    changed = old.metadata != metadata || !old.inCatalog || old.fileName == nil
                    if old.fileName == nil {
                        old.fileName = try uniqueFileName(for: entry)
                        if old.state == .metadataPending { progress.report.resolvedPendingItemIDs.append(old.id) }
                    }
                    try update.execute(arguments: StatementArguments(metadata.arguments + [
                        old.fileName, now, feedSize, replaced || metadata.namesOtherBytes(than: old.metadata),
                        metadata.changesSideFiles(from: old.metadata), old.id]))
                }
                let links = try Set(Int64.fetchCursor(linksOf, arguments: [old.id]))
                changed = try relink(itemID: old.id, from: links, to: categories) || changed
                let terms = try Row.fetchOne(licenceOf, arguments: [old.id]).map { Licence(row: $0).terms }
                changed = try putLicence(itemID: old.id, from: terms, to: entry.licence) || changed
                if changed { progress.report.updated += 1 } else { progress.report.unchanged += 1 }
            } else {
                let categories = try categoryIDs(for: entry.categoryPaths)
                let fileName = try uniqueFileName(for: entry)
                try insert.execute(arguments: StatementArguments(
                    [sourceID] + metadata.arguments + [entry.contentID, fileName, now, now, metadata.size]))
                let id = db.lastInsertedRowID
                progress.seen.insert(id)
                progress.pageIDs.append(id)
                _ = try relink(itemID: id, from: [], to: categories)
                _ = try putLicence(itemID: id, from: nil, to: entry.licence)
                progress.report.added += 1
                if progress.report.discovered.count < MergeReport.discoveredLimit {
                    progress.report.discovered.append(DiscoveredItem(id: id, fileName: fileName))
                }
            }
        }
    }

    /// The size an item keeps when its feed is merged again, set in `metadata`; returns the
    /// feed's size to record, and whether cached bytes are of a file the feed has replaced.
    /// For the same URL the origin's size, which its answers gave the item, wins over a feed
    /// that states the same length as before (a wrong one, stated again at every sync), cached
    /// or evicted. A new length is news of a new file: it is taken, except while the cached
    /// bytes, of the version before, are kept; then it is taken once they are evicted (the
    /// feed's size is left as it was meanwhile). Another URL with the same stated length is
    /// the same file moved (another CDN, a tracking prefix): its bytes and size stay. Another
    /// URL and another length is another file: cached bytes of the old one are replaced.
    private func size(of metadata: inout Metadata, old: Existing) throws -> (feedSize: Int64?, replaced: Bool) {
        let stated = metadata.size
        let known = { [originSize] in try originSize.firstRow(.integer(old.id), body: { $0.optionalInt64(0) }) ?? nil }
        guard metadata.mediaURL == old.metadata.mediaURL else {
            if stated == old.feedSize {
                metadata.size = old.metadata.size
                return (stated, false)
            }
            return (stated, try known() != nil)
        }
        if stated == old.feedSize {
            metadata.size = old.metadata.size
            return (stated, false)
        }
        if stated != old.metadata.size, let known = try known(), known == old.metadata.size {
            metadata.size = known
            return (old.feedSize, false)
        }
        return (stated, false)
    }

    /// After the whole catalog was merged: the source's items it did not list are deleted if
    /// nothing of them is worth keeping, else marked out of the catalog.
    mutating func removeUnlisted(_ progress: inout MergeProgress) throws {
        var gone: [Int64] = []
        var leaving: [Int64] = []
        let cursor = try Row.fetchCursor(db, sql: """
            SELECT id, state, bytesPresent, requested, locked, inCatalog FROM item WHERE sourceID = ?
            """, arguments: [sourceID])
        while let row = try cursor.next() {
            let id: Int64 = row[0]
            guard !progress.seen.contains(id) else { continue }
            let state = ItemState(rawValue: row[1]) ?? .failed
            let bytesPresent: Int64 = row[2]
            let requested: Bool = row[3]
            let locked: Bool = row[4]
            if state == .discovered && bytesPresent == 0 && !requested && !locked {
                gone.append(id)
                continue
            }
            if row[5] as Bool { leaving.append(id) }
            if state != .deleted { progress.report.keptDownloaded += 1 }
        }
        let delete = try db.cachedStatement(sql: "DELETE FROM item WHERE id = ?")
        for id in gone { try delete.execute(arguments: [id]) }
        let leave = try db.cachedStatement(sql: "UPDATE item SET inCatalog = 0, updatedAt = ? WHERE id = ?")
        for id in leaving { try leave.execute(arguments: [now, id]) }
        progress.report.removed += gone.count
        progress.report.removedItemIDs = gone.sorted()
    }

    /// `<title> [<id>].<ext>`, with ` (n)` until no item in the library has it.
    private func uniqueFileName(for entry: CatalogEntry) throws -> String {
        let ext = FileNaming.fileExtension(type: entry.type, mimeType: entry.mimeType, mediaURL: entry.mediaURL)
        var n = 1
        while true {
            let name = FileNaming.itemFileName(title: entry.title, contentID: entry.contentID, ext: ext, collision: n)
            if try nameTaken.firstRow(.text(name), body: { _ in () }) == nil { return name }
            n += 1
        }
    }

    /// Category ids for name paths, creating missing categories. Names are trimmed and
    /// NFC-normalized so NFC and NFD spellings of one category are one category; empty
    /// components are skipped and depth is capped at 16 (feeds are untrusted).
    private mutating func categoryIDs(for paths: [[String]]) throws -> Set<Int64> {
        var ids = Set<Int64>()
        for path in paths {
            if let id = pathCache[path] {
                ids.insert(id)
                continue
            }
            var parent: Int64 = 0
            for raw in path.prefix(16) {
                let name = raw.trimmingCharacters(in: .whitespacesAndNewlines).precomposedStringWithCanonicalMapping
                if name.isEmpty { continue }
                let key = CategoryKey(parent: parent, name: name)
                if let id = categoryByKey[key] {
                    parent = id
                    continue
                }
                var n = 1
                var folder = FileNaming.folderName(name)
                while folderNames[parent, default: []].contains(folder) {
                    n += 1
                    folder = FileNaming.folderName(name, collision: n)
                }
                try db.cachedStatement(sql: "INSERT INTO category (name, parentID, folderName) VALUES (?, ?, ?)")
                    .execute(arguments: [name, parent == 0 ? nil : parent, folder])
                let id = db.lastInsertedRowID
                categoryByKey[key] = id
                folderNames[parent, default: []].insert(folder)
                parent = id
            }
            if parent != 0 {
                ids.insert(parent)
                pathCache[path] = parent
            }
        }
        return ids
    }

    /// Makes the item's links equal `categories`; returns whether anything changed.
    private func relink(itemID: Int64, from current: Set<Int64>, to categories: Set<Int64>) throws -> Bool {
        guard current != categories else { return false }
        for id in current.subtracting(categories) {
            try deleteLink.execute(arguments: [itemID, id])
        }
        for id in categories.subtracting(current) {
            try insertLink.execute(arguments: [itemID, id])
        }
        return true
    }

    /// Stores the catalog's licence terms, keeping what acquisition recorded (times, key).
    /// Terms gone from the catalog remove the licence. Returns whether anything changed.
    private func putLicence(itemID: Int64, from current: LicenceTerms?, to terms: LicenceTerms?) throws -> Bool {
        guard current != terms else { return false }
        if let terms {
            try db.cachedStatement(sql: """
                INSERT INTO licence (itemID, kind, rentalDuration, playDuration, licenceURL) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (itemID) DO UPDATE SET kind = excluded.kind, rentalDuration = excluded.rentalDuration,
                    playDuration = excluded.playDuration, licenceURL = excluded.licenceURL
                """).execute(arguments: [itemID, terms.kind.rawValue, terms.rentalDuration, terms.playDuration, terms.licenceURL])
        } else {
            try db.cachedStatement(sql: "DELETE FROM licence WHERE itemID = ?").execute(arguments: [itemID])
        }
        return true
    }
}
