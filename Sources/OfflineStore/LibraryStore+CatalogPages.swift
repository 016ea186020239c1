import Foundation
internal import GRDB

/// One further page of a paged catalog as the last sync found it: how to ask for it
/// conditionally, and where it led. The first page's validators are the source's own.
public struct CatalogPage: Sendable, Equatable {
    public var url: String
    public var etag: String?
    public var lastModified: String?
    /// The page its `next` named (resolved); nil on the last page.
    public var nextURL: String?
    /// How many items it listed (as read back from the store; ignored when recording).
    public var itemCount: Int

    public init(url: String, etag: String?, lastModified: String?, nextURL: String?, itemCount: Int = 0) {
        self.url = url
        self.etag = etag
        self.lastModified = lastModified
        self.nextURL = nextURL
        self.itemCount = itemCount
    }

    /// Whether the page can be asked for conditionally.
    public var hasValidators: Bool { etag != nil || lastModified != nil }
}

extension LibraryStore {
    /// The further pages of the source's catalog that its syncs recorded, by URL.
    public func catalogPages(sourceID: Int64) throws -> [String: CatalogPage] {
        try read { db in
            var pages: [String: CatalogPage] = [:]
            let rows = try Row.fetchCursor(db, sql: """
                SELECT url, etag, lastModified, nextURL, length(itemIDs) FROM catalogPage WHERE sourceID = ?
                """, arguments: [sourceID])
            while let row = try rows.next() {
                let byteCount: Int = row[4]
                pages[row[0]] = CatalogPage(url: row[0], etag: row[1], lastModified: row[2], nextURL: row[3],
                                            itemCount: byteCount / MemoryLayout<Int64>.size)
            }
            return pages
        }
    }

    /// The items a recorded page listed; nil when there is no record of it.
    func catalogPageItemIDs(sourceID: Int64, url: String) throws -> [Int64]? {
        try read { db in
            try Data.fetchOne(db, sql: "SELECT itemIDs FROM catalogPage WHERE sourceID = ? AND url = ?",
                              arguments: [sourceID, url]).map(Self.itemIDs(from:))
        }
    }

    /// Records a page that was just merged, in the merge's transaction.
    static func record(_ db: Database, _ page: CatalogPage, sourceID: Int64, itemIDs: [Int64]) throws {
        try db.execute(sql: """
            INSERT INTO catalogPage (sourceID, url, etag, lastModified, nextURL, itemIDs) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT (sourceID, url) DO UPDATE SET etag = excluded.etag, lastModified = excluded.lastModified,
                nextURL = excluded.nextURL, itemIDs = excluded.itemIDs
            """, arguments: [sourceID, page.url, page.etag, page.lastModified, page.nextURL, blob(of: itemIDs)])
    }

    /// Forgets the records of the source's pages other than `pages` (a complete sync did not
    /// meet them: their items may be gone).
    static func forgetCatalogPages(_ db: Database, sourceID: Int64, keeping pages: Set<String>) throws {
        let recorded = try String.fetchAll(db, sql: "SELECT url FROM catalogPage WHERE sourceID = ?", arguments: [sourceID])
        for url in recorded where !pages.contains(url) {
            try db.execute(sql: "DELETE FROM catalogPage WHERE sourceID = ? AND url = ?", arguments: [sourceID, url])
        }
    }

    /// Item ids as 8-byte little-endian integers, one after another.
    private static func blob(of itemIDs: [Int64]) -> Data {
        var data = Data(capacity: itemIDs.count * MemoryLayout<Int64>.size)
        for id in itemIDs { withUnsafeBytes(of: id.littleEndian) { data.append(contentsOf: $0) } }
        return data
    }

    private static func itemIDs(from blob: Data) -> [Int64] {
        blob.withUnsafeBytes { raw in
            stride(from: 0, to: raw.count - raw.count % 8, by: 8).map { Int64(littleEndian: raw.loadUnaligned(fromByteOffset: $0, as: Int64.self)) }
        }
    }
}
