import Foundation
internal import GRDB

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
        var progress = MergeProgress()
        let report = try write { db in
            try mergePage(db, sourceID: sourceID, entries: entries, progress: &progress, now: now)
            return try finishMerge(db, sourceID: sourceID, title: title, isComplete: isComplete, pages: [],
                                   progress: &progress, now: now)
        }
        if Self.changesOrigins(report) { catalogChanges.bump() }
        return report
    }

    /// A merge of a catalog that arrives page by page: each page is merged in a transaction
    /// of its own as it comes, so memory stays bounded by a page, not by the catalog.
    /// `mergeCatalog`'s rules apply to the whole; see `PagedCatalogMerge`.
    public func beginCatalogMerge(sourceID: Int64, now: Date) -> PagedCatalogMerge {
        PagedCatalogMerge(store: self, sourceID: sourceID, now: now)
    }

    /// One page of a merge, in the caller's transaction, with its `discovered` events (up
    /// to `MergeReport.discoveredLimit` for the whole merge).
    fileprivate func mergePage(_ db: Database, sourceID: Int64, entries: [CatalogEntry], progress: inout MergeProgress,
                               now: Date) throws {
        guard let source = try Self.fetchSource(db, id: sourceID) else {
            throw StoreError(.unknownSource, "no source with id \(sourceID)")
        }
        let alreadyDiscovered = progress.report.discovered.count
        var merger = try CatalogMerger(db: db, sourceID: sourceID, now: now)
        try merger.merge(entries, into: &progress)
        for item in progress.report.discovered[alreadyDiscovered...] {
            try insertEvent(db, kind: .discovered, itemID: item.id, sourceID: sourceID,
                            message: "discovered sources/\(source.name)/\(item.fileName)", details: nil, at: now)
        }
    }

    /// The end of a merge, in the caller's transaction: the items the catalog no longer
    /// lists (when `isComplete`) and the pages it no longer has (all but `pages`), the
    /// source's title, the summary events.
    fileprivate func finishMerge(_ db: Database, sourceID: Int64, title: String?, isComplete: Bool, pages: Set<String>,
                                 progress: inout MergeProgress, now: Date) throws -> MergeReport {
        guard let source = try Self.fetchSource(db, id: sourceID) else {
            throw StoreError(.unknownSource, "no source with id \(sourceID)")
        }
        if let title, title != source.title {
            try db.execute(sql: "UPDATE source SET title = ? WHERE id = ?", arguments: [title, sourceID])
            // Its items' `.nfo` name the show (`ItemSidecar`): their times move with it.
            if source.title != nil {
                try db.execute(sql: "UPDATE item SET sidesChangedAt = ? WHERE sourceID = ?", arguments: [now.dbTime, sourceID])
            }
        }
        if isComplete {
            var merger = try CatalogMerger(db: db, sourceID: sourceID, now: now)
            try merger.removeUnlisted(&progress)
            try Self.forgetCatalogPages(db, sourceID: sourceID, keeping: pages)
        }
        let report = progress.report
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
        // Counted inside the transaction too: see `CatalogChanges`.
        if Self.changesOrigins(report) {
            catalogChanges.bump()
            try Self.forgetEmptyCategories(db)  // items gone, or moved to other categories
        }
        return report
    }

    /// Deletes the categories no item is in, nor any category below them: a renamed
    /// category, or one whose source was removed, would stay an empty folder for good.
    static func forgetEmptyCategories(_ db: Database) throws {
        repeat {
            try db.execute(sql: """
                DELETE FROM category WHERE NOT EXISTS (SELECT 1 FROM itemCategory WHERE categoryID = category.id)
                  AND NOT EXISTS (SELECT 1 FROM category AS child WHERE ifnull(child.parentID, 0) = category.id)
                """)
        } while db.changesCount > 0
    }

    /// Whether a merge may have changed an item's media URL or removed an item.
    fileprivate static func changesOrigins(_ report: MergeReport) -> Bool {
        report.updated > 0 || report.removed > 0
    }
}

/// A catalog merged page by page (`LibraryStore.beginCatalogMerge`).
///
/// Each `merge(page:)` commits on its own, so a crash or a failed page keeps the pages
/// before it: their new items are listed and their changes kept, and nothing is removed,
/// since only `finish` (after the last page) removes what the catalog no longer lists. The
/// first page also forgets the source's validators, so that the sync after an interrupted
/// one fetches the whole catalog again rather than trusting a `304`.
///
/// A further page is recorded with its validators and the items it listed, in the
/// transaction that merges it (`merge(page:recording:)`); a later sync that gets a `304` for
/// it keeps those items listed without merging them (`keepUnchangedPage`). Each page's record
/// matches what its own merge committed, so a sync interrupted at any page leaves records a
/// `304` may still be trusted with.
public struct PagedCatalogMerge {
    let store: LibraryStore
    let sourceID: Int64
    let now: Date
    private var progress = MergeProgress()
    private var started = false
    private var over = false
    /// The further pages this merge met, merged or unchanged: the records `finish` keeps.
    private var pages = Set<String>()

    init(store: LibraryStore, sourceID: Int64, now: Date) {
        self.store = store
        self.sourceID = sourceID
        self.now = now
    }

    /// What the pages merged so far did (added, updated…; nothing removed yet).
    public var report: MergeReport { progress.report }

    /// Merges one page in a transaction of its own. An entry whose content id an earlier page
    /// listed is skipped (the first listing wins). `page`: a further page's validators, kept
    /// with the items it lists for the next sync (never the first page's). After a throw the
    /// merge is over: `report` tells what the pages before committed.
    /// - Throws: `.unknownSource`.
    public mutating func merge(page entries: [CatalogEntry], recording page: CatalogPage? = nil) throws {
        precondition(!over, "a catalog merge goes on after it failed or finished")
        let before = progress.report
        let clearValidators = !started
        // Moved, not copied: a copy of the seen set would be duplicated on every page.
        var pageProgress = progress
        progress = MergeProgress()
        pageProgress.pageIDs = []
        do {
            try store.write { db in
                if clearValidators {
                    try db.execute(sql: "UPDATE source SET etag = NULL, lastModified = NULL WHERE id = ?",
                                   arguments: [sourceID])
                }
                try store.mergePage(db, sourceID: sourceID, entries: entries, progress: &pageProgress, now: now)
                if let page { try LibraryStore.record(db, page, sourceID: sourceID, itemIDs: pageProgress.pageIDs) }
                // Counted inside the transaction too: see `CatalogChanges`.
                if pageProgress.report.updated > before.updated { store.catalogChanges.bump() }
            }
        } catch {
            progress.report = before
            over = true
            throw error
        }
        progress = pageProgress
        progress.pageIDs = []
        started = true
        if let page { pages.insert(page.url) }
        if progress.report.updated > before.updated { store.catalogChanges.bump() }
    }

    /// A further page answered `304`: the items its record lists stay listed, as if merged
    /// unchanged. False when the store has no record of it: the sync then fails, and the next
    /// one, which trusts no validator after a failure, fetches every page whole.
    public mutating func keepUnchangedPage(url: String) throws -> Bool {
        precondition(!over, "a catalog merge goes on after it failed or finished")
        guard let itemIDs = try store.catalogPageItemIDs(sourceID: sourceID, url: url) else { return false }
        for id in itemIDs where progress.seen.insert(id).inserted { progress.report.unchanged += 1 }
        pages.insert(url)
        return true
    }

    /// Ends the merge in one transaction: when `isComplete` (every page was merged), the items
    /// the catalog did not list leave as `mergeCatalog` says; then the title and the events.
    /// - Throws: `.unknownSource`.
    public mutating func finish(title: String?, isComplete: Bool) throws -> MergeReport {
        precondition(!over, "a catalog merge goes on after it failed or finished")
        over = true
        var finalProgress = progress
        progress = MergeProgress(report: progress.report)
        let report = try store.write { db in
            try store.finishMerge(db, sourceID: sourceID, title: title, isComplete: isComplete, pages: pages,
                                  progress: &finalProgress, now: now)
        }
        if LibraryStore.changesOrigins(report) { store.catalogChanges.bump() }
        return report
    }
}
