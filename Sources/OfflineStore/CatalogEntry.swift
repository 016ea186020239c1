import Foundation

/// One item as a feed lists it: the input of `LibraryStore.mergeCatalog`.
public struct CatalogEntry: Sendable, Hashable {
    public var contentID: String
    public var title: String
    public var type: ItemType
    public var mediaURL: String
    public var size: Int64?
    public var mimeType: String?
    public var duration: Double?
    public var publishedAt: Date?
    public var summary: String?
    public var thumbnailURL: String?
    /// The thumbnail's bytes (the catalog's, else a HEAD's at sync).
    public var thumbnailSize: Int64?
    public var subtitles: [SubtitleTrack]
    public var sha256: String?
    public var licence: LicenceTerms?
    /// Each path is category names from the root down (`[["news", "local"], ["family"]]`).
    public var categoryPaths: [[String]]

    public init(contentID: String, title: String, type: ItemType, mediaURL: String, size: Int64? = nil,
                mimeType: String? = nil, duration: Double? = nil, publishedAt: Date? = nil, summary: String? = nil,
                thumbnailURL: String? = nil, thumbnailSize: Int64? = nil, subtitles: [SubtitleTrack] = [],
                sha256: String? = nil, licence: LicenceTerms? = nil, categoryPaths: [[String]] = []) {
        self.contentID = contentID
        self.title = title
        self.type = type
        self.mediaURL = mediaURL
        self.size = size
        self.mimeType = mimeType
        self.duration = duration
        self.publishedAt = publishedAt
        self.summary = summary
        self.thumbnailURL = thumbnailURL
        self.thumbnailSize = thumbnailSize
        self.subtitles = subtitles
        self.sha256 = sha256
        self.licence = licence
        self.categoryPaths = categoryPaths
    }
}

/// What one catalog merge changed.
public struct MergeReport: Sendable, Codable, Hashable {
    /// New content ids, inserted as `discovered`.
    public var added = 0
    /// Known items whose metadata, categories or catalog membership changed.
    public var updated = 0
    public var unchanged = 0
    /// Items that left the feed and were deleted (undownloaded, no bytes).
    public var removed = 0
    /// Items that left the feed but were kept (requested, downloaded, streamed bytes, locked).
    public var keptDownloaded = 0
    /// Ids of the removed items, so the engine can delete any side files (thumbnails).
    public var removedItemIDs: [Int64] = []
    /// `metadata-pending` items that this merge gave metadata (and a file name); their
    /// state is left for the engine to move on (e.g. to `queued`).
    public var resolvedPendingItemIDs: [Int64] = []
    /// Items whose media the feed moved to another URL with another stated length while
    /// bytes of the old file are cached: the engine drops those and fetches the new file.
    public var replacedMediaItemIDs: [Int64] = []
    /// The first `discoveredLimit` new items, by id and file name: one `discovered` event
    /// each (a first sync of a huge feed writes one summary line for the rest).
    public var discovered: [DiscoveredItem] = []
    public static let discoveredLimit = 1000

    public init() {}
}

/// A new item of a sync (`MergeReport.discovered`).
public struct DiscoveredItem: Sendable, Codable, Hashable {
    public var id: Int64
    public var fileName: String
}
