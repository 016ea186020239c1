import Foundation

/// The format of a source's feed, detected at the first sync.
public enum FeedKind: String, Sendable, Codable, CaseIterable, Hashable {
    case json, rss, atom
}

/// A provider of items (a channel, a podcast feed, a catalog).
public struct Source: Sendable, Codable, Hashable, Identifiable {
    public var id: Int64
    /// The name given to `source add`; names the `sources/<name>` folder, so it is validated
    /// as a file name (see `LibraryStore.validateSourceName`).
    public var name: String
    /// The feed's own display title, once synced.
    public var title: String?
    public var feedURL: String
    /// Nil until the first sync detects it.
    public var kind: FeedKind?
    public var subscribed: Bool
    public var etag: String?
    public var lastModified: String?
    public var lastSyncAt: Date?
    public var lastSyncError: String?
    public var nextSyncAt: Date?
    public var addedAt: Date
    /// The feed's artwork (`<image>`, `itunes:image`, the catalog's source image), from the
    /// last sync.
    public var imageURL: String? = nil
    /// When a sync found the artwork at another URL (nil: never since it was added): the
    /// time of `folder.jpg`.
    public var imageChangedAt: Date? = nil
}
