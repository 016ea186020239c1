import Foundation

/// One subtitle track of an item, as the catalog lists it.
public struct SubtitleTrack: Sendable, Codable, Hashable {
    /// BCP-47 language tag (`en`, `pt-BR`).
    public var language: String
    public var url: String
    /// `vtt`, `srt`, … (from the catalog or the URL); nil when unknown.
    public var format: String?
    /// Bytes, from the catalog or a HEAD at sync; nil when unknown.
    public var size: Int64?

    public init(language: String, url: String, format: String? = nil, size: Int64? = nil) {
        self.language = language
        self.url = url
        self.format = format
        self.size = size
    }
}

/// One piece of content of a source, with its download state. A plain record: cache and
/// transport state live in their own tables keyed by `id`.
public struct Item: Sendable, Codable, Hashable, Identifiable {
    /// Never reused (AUTOINCREMENT), so cache files and events named by id stay unambiguous.
    public var id: Int64
    public var sourceID: Int64
    /// Unique within the source: JSON `id`, RSS `<guid>` (else enclosure URL), Atom `<id>`.
    public var contentID: String
    public var title: String
    public var type: ItemType
    /// Nil only while `metadata-pending`.
    public var mediaURL: String?
    /// Bytes, when known.
    public var size: Int64?
    public var mimeType: String?
    /// Seconds.
    public var duration: Double?
    public var publishedAt: Date?
    public var summary: String?
    public var thumbnailURL: String?
    public var subtitles: [SubtitleTrack]
    /// Lower-case hex, when the catalog gives one.
    public var sha256: String?
    public var state: ItemState
    public var error: ItemErrorCode?
    /// Free text for the error (an HTTP status, a path).
    public var errorDetail: String?
    /// The user asked for it (download), as opposed to bytes a program streamed.
    public var requested: Bool
    /// Pinned by `lock`: never evicted.
    public var locked: Bool
    /// Bytes of the media present in the cache (thumbnail and subtitles not counted).
    public var bytesPresent: Int64
    public var downloadedAt: Date?
    public var lastAccessAt: Date?
    /// `<title> [<content id>].<ext>`, made safe and unique library-wide; computed once
    /// (see `FileNaming`) and never changed. Nil only while `metadata-pending`.
    public var fileName: String?
    public var addedAt: Date
    public var updatedAt: Date
    /// Still listed by the source's feed at the last complete sync.
    public var inCatalog: Bool
    /// Requested quality (`low`, `medium`, `high` or bits per second) for HLS.
    public var quality: String?
    /// Requested partial download, in seconds of HLS media.
    public var partialSeconds: Double?
    /// HLS: audio languages asked for beside the default audio (`en,fr`); nil: the default only.
    public var audioLanguages: String? = nil
    /// The thumbnail's bytes, from the catalog or a HEAD at sync; nil when unknown.
    public var thumbnailSize: Int64? = nil
    /// The resume point, in seconds (nil: never set; 0 once watched).
    public var position: Double? = nil
    /// When it was last marked watched (nil: not watched).
    public var watchedAt: Date? = nil
    /// When a playback of it last ended, or `played` was last said of it.
    public var lastPlayedAt: Date? = nil
    /// When its media last changed at the origin, and when what its side files are made of
    /// last changed (nil: never since it was added); its files' times (`ItemOutline`).
    public var mediaChangedAt: Date? = nil
    public var sidesChangedAt: Date? = nil
    /// When it was last asked for while not asked for (nil: not requested, or asked before
    /// the store kept this): `auto-purge` makes room for it only with what was downloaded
    /// before, never with items of the same wish.
    public var requestedAt: Date? = nil

    public var watched: Bool { watchedAt != nil }

    /// Fraction of the media present, 0…1 (0 when the size is unknown).
    public var progress: Double {
        guard let size, size > 0 else { return state == .cached ? 1 : 0 }
        return min(1, Double(bytesPresent) / Double(size))
    }
}
