public import Foundation
internal import GRDB

/// What an item's `.nfo` is made of (the engine's `ItemSidecar`): read for every item at each
/// tree build of a library with policy `sidecars nfo`, so only these columns.
public struct ItemDetails: Sendable, Equatable {
    public var id: Int64
    public var sourceID: Int64
    public var contentID: String
    public var title: String
    public var type: ItemType
    public var summary: String?
    public var publishedAt: Date?
    public var duration: Double?
    public var thumbnailURL: String?
}

extension Item {
    public var details: ItemDetails {
        ItemDetails(id: id, sourceID: sourceID, contentID: contentID, title: title, type: type, summary: summary,
                    publishedAt: publishedAt, duration: duration, thumbnailURL: thumbnailURL)
    }
}

extension LibraryStore {
    /// The details of every item but tombstones, in no order.
    public func forEachItemDetails(_ body: (ItemDetails) throws -> Void) throws {
        try read { db in
            let rows = try Row.fetchCursor(db, sql: """
                SELECT id, sourceID, contentID, title, type, summary, publishedAt, duration, thumbnailURL
                FROM item WHERE state != 'deleted'
                """)
            while let row = try rows.next() {
                try body(ItemDetails(id: row[0], sourceID: row[1], contentID: row[2], title: row[3],
                                     type: ItemType(rawValue: row[4]) ?? .file, summary: row[5],
                                     publishedAt: Date(dbTime: row[6]), duration: row[7], thumbnailURL: row[8]))
            }
        }
    }
}
