public import Foundation
public import OfflineStore

/// An item as scripts see it in `ls --json`, `status --json` and `.status.json`
/// (field names from DESIGN §6).
public struct ItemSummary: Sendable, Codable, Equatable {
    public var id: Int64
    public var source: String
    public var contentId: String
    public var title: String
    public var fileName: String
    /// Under `sources/`, relative to the mount point; empty for an item with no file yet.
    public var path: String
    public var type: String
    public var state: String
    public var error: String?
    public var size: Int64?
    public var bytes: Int64
    public var progress: Double
    /// `purchase`, `rental` or `none`.
    public var licence: String
    /// ISO-8601 UTC, or `never`.
    public var licenceExpires: String
    /// Category paths joined with `/`.
    public var categories: [String]
    public var mediaURL: String?
    public var mimeType: String?
    public var duration: Double?
    public var published: Date?
    /// When its last download completed (nil: not downloaded).
    public var downloaded: Date?
    /// Pinned (`offlinefs lock`): never evicted or deleted.
    public var locked: Bool
    /// Marked watched (docs/playback.md).
    public var watched: Bool
    /// The resume point in seconds (0: from the start).
    public var position: Double
    /// When a playback last ended (nil: never played).
    public var lastPlayed: Date?
    /// Bytes per second while downloading, when measured (`status --watch`).
    public var speed: Double?
    /// Seconds left at that speed.
    public var eta: Double?
    /// HLS: segments on disk and in the chosen rendition (`12/600`), once one is chosen.
    public var segments: String?
    /// HLS: the chosen variant (`530000 bps 640x360 …`).
    public var variant: String?
    /// HLS: `size` is the estimate made when the rendition was chosen (bandwidth × duration),
    /// not yet the exact byte count.
    public var sizeIsEstimate: Bool?

    /// Put before the size in a table: `~` while it is an estimate.
    public var sizeMark: String { sizeIsEstimate == true ? "~" : "" }

    /// The progress column of a table: percent, and segments for HLS (`40.0% 4/10 seg`).
    public var progressText: String {
        String(format: "%.1f%%", progress * 100) + (segments.map { " \($0) seg" } ?? "")
    }

    /// DESIGN §6's fields, the media's facts, dates and play state are always there (null when
    /// not known), so a script may index them; `speed` and `eta` only while a download runs,
    /// the HLS facts only for HLS items.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(source, forKey: .source)
        try container.encode(contentId, forKey: .contentId)
        try container.encode(title, forKey: .title)
        try container.encode(fileName, forKey: .fileName)
        try container.encode(path, forKey: .path)
        try container.encode(type, forKey: .type)
        try container.encode(state, forKey: .state)
        try container.encode(error, forKey: .error)
        try container.encode(size, forKey: .size)
        try container.encode(bytes, forKey: .bytes)
        try container.encode(progress, forKey: .progress)
        try container.encode(licence, forKey: .licence)
        try container.encode(licenceExpires, forKey: .licenceExpires)
        try container.encode(categories, forKey: .categories)
        try container.encode(mediaURL, forKey: .mediaURL)
        try container.encode(mimeType, forKey: .mimeType)
        try container.encode(duration, forKey: .duration)
        try container.encode(published, forKey: .published)
        try container.encode(downloaded, forKey: .downloaded)
        try container.encode(locked, forKey: .locked)
        try container.encode(watched, forKey: .watched)
        try container.encode(position, forKey: .position)
        try container.encode(lastPlayed, forKey: .lastPlayed)
        try container.encodeIfPresent(speed, forKey: .speed)
        try container.encodeIfPresent(eta, forKey: .eta)
        try container.encodeIfPresent(segments, forKey: .segments)
        try container.encodeIfPresent(variant, forKey: .variant)
        try container.encodeIfPresent(sizeIsEstimate, forKey: .sizeIsEstimate)
    }

    public init(_ listing: ItemListing, licence: Licence?) {
        let item = listing.item
        id = item.id
        source = listing.sourceName
        contentId = item.contentID
        title = item.title
        // An item known only by its content id (its lookup is pending or failed) has no file
        // yet: it is listed by that id, with no path in the mount.
        fileName = item.fileName ?? "[\(item.contentID)]"
        path = item.fileName.map { "sources/\(listing.sourceName)/\($0)" } ?? ""
        type = item.type.rawValue
        state = item.state.rawValue
        error = item.error?.rawValue
        size = item.size
        bytes = item.bytesPresent
        progress = (item.progress * 10_000).rounded() / 10_000
        self.licence = licence?.terms.kind.rawValue ?? "none"
        licenceExpires = LicenceClock.expiryText(licence)
        categories = listing.categoryPaths.map { $0.joined(separator: "/") }
        mediaURL = item.mediaURL
        mimeType = item.mimeType
        duration = item.duration
        published = item.publishedAt
        downloaded = item.downloadedAt
        locked = item.locked
        watched = item.watched
        position = item.position ?? 0
        lastPlayed = item.lastPlayedAt
    }
}
