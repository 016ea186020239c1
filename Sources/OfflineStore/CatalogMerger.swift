import Foundation
internal import GRDB

/// Merges one sync's catalog into the items of a source, inside the caller's transaction.
///
/// Built for 100,000-item catalogs: it loads the source's items, the library's file names,
/// the category tree and the source's links and licences into memory once, then runs only
/// cached (prepared) statements for rows that actually change.
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
            title = e.title
            type = e.type.rawValue
            mediaURL = e.mediaURL
            size = e.size
            mimeType = e.mimeType
            duration = e.duration
            publishedAt = e.publishedAt?.dbTime
            summary = e.summary
            thumbnailURL = e.thumbnailURL
            subtitles = e.subtitles.isEmpty ? nil : JSONText.encode(e.subtitles)
            sha256 = e.sha256
            thumbnailSize = e.thumbnailSize
        }

        init(row: Row) {
            title = row[2]; type = row[3]; mediaURL = row[4]; size = row[5]; mimeType = row[6]
            duration = row[7]; publishedAt = row[8]; summary = row[9]; thumbnailURL = row[10]
            subtitles = row[11]; sha256 = row[12]; thumbnailSize = row[19]
        }

        var arguments: [(any DatabaseValueConvertible)?] {
            [title, type, mediaURL, size, mimeType, duration, publishedAt, summary, thumbnailURL, subtitles, sha256, thumbnailSize]
        }
    }

    struct Existing {
        var id: Int64
        var metadata: Metadata
        var state: ItemState
        var bytesPresent: Int64
        var requested: Bool
        var locked: Bool
        var fileName: String?
        var inCatalog: Bool
    }

    /// Content ids are opaque: compared byte for byte as SQLite's UNIQUE does, not with
    /// Swift's canonical equivalence (which would merge NFC/NFD twins into one item).
    struct ContentKey: Hashable {
        var id: String
        init(_ id: String) { self.id = id }
        static func == (a: Self, b: Self) -> Bool { a.id.utf8.elementsEqual(b.id.utf8) }
        func hash(into hasher: inout Hasher) {
            var copy = id
            copy.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        }
    }

    let db: Database
    let sourceID: Int64
    let now: Double
    private var existing: [ContentKey: Existing] = [:]
    private var takenFileNames: Set<String> = []
    private var categoryByKey: [CategoryKey: Int64] = [:]
    private var folderNames: [Int64: Set<String>] = [:] // parent (0 = root) → taken folder names
    private var links: [Int64: Set<Int64>] = [:]
    private var licences: [Int64: LicenceTerms] = [:]
    /// Raw category path → id: feeds repeat the same few paths on every item, and
    /// normalizing names costs more than the lookup.
    private var pathCache: [[String]: Int64] = [:]
    private let insertLink: Statement
    private let deleteLink: Statement

    struct CategoryKey: Hashable {
        var parent: Int64
        var name: String
    }

    init(db: Database, sourceID: Int64, now: Date) throws {
        self.db = db
        insertLink = try db.makeStatement(sql: "INSERT INTO itemCategory (itemID, categoryID) VALUES (?, ?)")
        deleteLink = try db.makeStatement(sql: "DELETE FROM itemCategory WHERE itemID = ? AND categoryID = ?")
        self.sourceID = sourceID
        self.now = now.dbTime
        let cursor = try Row.fetchCursor(db, sql: """
            SELECT id, contentID, title, type, mediaURL, size, mimeType, duration, publishedAt, summary,
                   thumbnailURL, subtitles, sha256, state, bytesPresent, requested, locked, fileName, inCatalog,
                   thumbnailSize
            FROM item WHERE sourceID = ?
            """, arguments: [sourceID])
        while let row = try cursor.next() {
            existing[ContentKey(row[1])] = Existing(
                id: row[0], metadata: Metadata(row: row), state: ItemState(rawValue: row[13]) ?? .failed,
                bytesPresent: row[14], requested: row[15], locked: row[16], fileName: row[17], inCatalog: row[18])
        }
        takenFileNames = try Set(String.fetchCursor(db, sql: "SELECT fileName FROM item WHERE fileName IS NOT NULL"))
        for row in try Row.fetchAll(db, sql: "SELECT id, ifnull(parentID, 0), name, folderName FROM category") {
            let parent: Int64 = row[1]
            categoryByKey[CategoryKey(parent: parent, name: row[2])] = row[0]
            folderNames[parent, default: []].insert(row[3])
        }
        let linkCursor = try Row.fetchCursor(db, sql: """
            SELECT itemCategory.itemID, itemCategory.categoryID FROM itemCategory
            JOIN item ON item.id = itemCategory.itemID WHERE item.sourceID = ?
            """, arguments: [sourceID])
        while let row = try linkCursor.next() { links[row[0], default: []].insert(row[1]) }
        for row in try Row.fetchAll(db, sql: """
            SELECT licence.* FROM licence JOIN item ON item.id = licence.itemID WHERE item.sourceID = ?
            """, arguments: [sourceID]) {
            let licence = Licence(row: row)
            licences[licence.itemID] = licence.terms
        }
    }

    mutating func merge(_ entries: [CatalogEntry], isComplete: Bool) throws -> MergeReport {
        var report = MergeReport()
        var seen = Set<ContentKey>(minimumCapacity: entries.count)
        let insert = try db.cachedStatement(sql: """
            INSERT INTO item (sourceID, title, type, mediaURL, size, mimeType, duration, publishedAt, summary,
                              thumbnailURL, subtitles, sha256, thumbnailSize, contentID, fileName, state, addedAt, updatedAt,
                              inCatalog)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'discovered', ?, ?, 1)
            """)
        let update = try db.cachedStatement(sql: """
            UPDATE item SET title = ?, type = ?, mediaURL = ?, size = ?, mimeType = ?, duration = ?, publishedAt = ?,
                summary = ?, thumbnailURL = ?, subtitles = ?, sha256 = ?, thumbnailSize = ?, fileName = ?, inCatalog = 1,
                updatedAt = ?
            WHERE id = ?
            """)

        for entry in entries where !entry.contentID.isEmpty {
            guard seen.insert(ContentKey(entry.contentID)).inserted else { continue } // first listing wins
            let metadata = Metadata(entry)
            let categories = try categoryIDs(for: entry.categoryPaths)
            if var old = existing[ContentKey(entry.contentID)] {
                var changed = false
                if old.metadata != metadata || !old.inCatalog || old.fileName == nil {
                    if old.fileName == nil {
                        old.fileName = uniqueFileName(for: entry)
                        if old.state == .metadataPending { report.resolvedPendingItemIDs.append(old.id) }
                    }
                    try update.execute(arguments: StatementArguments(metadata.arguments + [old.fileName, now, old.id]))
                    changed = true
                }
                changed = try relink(itemID: old.id, to: categories) || changed
                changed = try putLicence(itemID: old.id, entry.licence) || changed
                if changed { report.updated += 1 } else { report.unchanged += 1 }
            } else {
                let fileName = uniqueFileName(for: entry)
                try insert.execute(arguments: StatementArguments(
                    [sourceID] + metadata.arguments + [entry.contentID, fileName, now, now]))
                let id = db.lastInsertedRowID
                _ = try relink(itemID: id, to: categories)
                _ = try putLicence(itemID: id, entry.licence)
                report.added += 1
                if report.discovered.count < MergeReport.discoveredLimit {
                    report.discovered.append(DiscoveredItem(id: id, fileName: fileName))
                }
            }
        }

        if isComplete {
            let delete = try db.cachedStatement(sql: "DELETE FROM item WHERE id = ?")
            let leave = try db.cachedStatement(sql: "UPDATE item SET inCatalog = 0, updatedAt = ? WHERE id = ?")
            for (key, old) in existing where !seen.contains(key) {
                if old.state == .discovered && old.bytesPresent == 0 && !old.requested && !old.locked {
                    try delete.execute(arguments: [old.id])
                    report.removed += 1
                    report.removedItemIDs.append(old.id)
                    continue
                }
                if old.inCatalog { try leave.execute(arguments: [now, old.id]) }
                if old.state != .deleted { report.keptDownloaded += 1 }
            }
            report.removedItemIDs.sort()
        }
        return report
    }

    /// `<title> [<id>].<ext>`, with ` (n)` until no item in the library has it.
    private mutating func uniqueFileName(for entry: CatalogEntry) -> String {
        let ext = FileNaming.fileExtension(type: entry.type, mimeType: entry.mimeType, mediaURL: entry.mediaURL)
        var n = 1
        while true {
            let name = FileNaming.itemFileName(title: entry.title, contentID: entry.contentID, ext: ext, collision: n)
            if takenFileNames.insert(name).inserted { return name }
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
    private mutating func relink(itemID: Int64, to categories: Set<Int64>) throws -> Bool {
        let current = links[itemID] ?? []
        guard current != categories else { return false }
        for id in current.subtracting(categories) {
            try deleteLink.execute(arguments: [itemID, id])
        }
        for id in categories.subtracting(current) {
            try insertLink.execute(arguments: [itemID, id])
        }
        links[itemID] = categories
        return true
    }

    /// Stores the catalog's licence terms, keeping what acquisition recorded (times, key).
    /// Terms gone from the catalog remove the licence. Returns whether anything changed.
    private mutating func putLicence(itemID: Int64, _ terms: LicenceTerms?) throws -> Bool {
        guard licences[itemID] != terms else { return false }
        if let terms {
            try db.cachedStatement(sql: """
                INSERT INTO licence (itemID, kind, rentalDuration, playDuration, licenceURL) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (itemID) DO UPDATE SET kind = excluded.kind, rentalDuration = excluded.rentalDuration,
                    playDuration = excluded.playDuration, licenceURL = excluded.licenceURL
                """).execute(arguments: [itemID, terms.kind.rawValue, terms.rentalDuration, terms.playDuration, terms.licenceURL])
        } else {
            try db.cachedStatement(sql: "DELETE FROM licence WHERE itemID = ?").execute(arguments: [itemID])
        }
        licences[itemID] = terms
        return true
    }
}

extension LibraryStore {
    /// Merges one sync of a source's feed in a single transaction.
    ///
    /// - New content ids are inserted as `discovered`, in the catalog, with a file name that
    ///   is computed now and never changes.
    /// - Known items get the feed's metadata when it changed (their file name is kept) and
    ///   their categories re-linked; a tombstone (`deleted`) is updated but stays `deleted`;
    ///   an item still `metadata-pending` gets its file name (see `resolvedPendingItemIDs`).
    /// - Only when `isComplete` (the whole feed was read): items absent from it are deleted if
    ///   `discovered`, unrequested, unlocked and without bytes; the others stay, with
    ///   `inCatalog = false` (counted in `keptDownloaded` at every complete sync).
    /// - `title`, when given, becomes the source's display title.
    /// One `sync` event summarizes the merge.
    /// - Throws: `.unknownSource`.
    public func mergeCatalog(sourceID: Int64, title: String?, entries: [CatalogEntry], isComplete: Bool,
                             now: Date) throws -> MergeReport {
        let report = try write { db in
            guard let source = try Self.fetchSource(db, id: sourceID) else {
                throw StoreError(.unknownSource, "no source with id \(sourceID)")
            }
            if let title, title != source.title {
                try db.execute(sql: "UPDATE source SET title = ? WHERE id = ?", arguments: [title, sourceID])
            }
            var merger = try CatalogMerger(db: db, sourceID: sourceID, now: now)
            let report = try merger.merge(entries, isComplete: isComplete)
            for item in report.discovered {
                try insertEvent(db, kind: .discovered, itemID: item.id, sourceID: sourceID,
                                message: "discovered sources/\(source.name)/\(item.fileName)", details: nil, at: now)
            }
            if report.added > report.discovered.count {
                try insertEvent(db, kind: .discovered, itemID: nil, sourceID: sourceID,
                                message: "discovered \(report.added - report.discovered.count) more items in sources/\(source.name)/",
                                details: nil, at: now)
            }
            let summary = ["added": report.added, "updated": report.updated, "unchanged": report.unchanged,
                           "removed": report.removed, "keptDownloaded": report.keptDownloaded]
            try insertEvent(db, kind: .sync, itemID: nil, sourceID: sourceID,
                            message: "synced \(source.name): \(report.added) added, \(report.updated) updated, "
                                + "\(report.unchanged) unchanged, \(report.removed) removed, \(report.keptDownloaded) kept",
                            details: JSONText.encode(summary), at: now)
            if Self.changesOrigins(report) { catalogChanges.bump() }
            return report
        }
        if Self.changesOrigins(report) { catalogChanges.bump() }
        return report
    }

    /// Whether a merge may have changed an item's media URL or removed an item.
    private static func changesOrigins(_ report: MergeReport) -> Bool {
        report.updated > 0 || report.removed > 0
    }
}
