import Foundation

/// The format of a catalog feed document.
public enum FeedKind: String, Sendable, Codable, CaseIterable {
    /// The offlinefs JSON catalog, version 1 (see CATALOG-FORMAT.md).
    case json
    /// RSS 2.0 (and RSS 1.0/RDF), including podcast, iTunes and Media RSS tags.
    case rss
    /// Atom 1.0 (RFC 4287).
    case atom
}

/// What kind of media an item's URL points at.
public enum MediaType: String, Sendable, Codable, CaseIterable {
    /// A progressive video file (mp4, mkv, webm …).
    case video
    /// An HLS master or media playlist (`.m3u8`).
    case hls
    /// An audio file (mp3, m4a, ogg …).
    case audio
    /// Anything else, downloaded as an opaque file.
    case file
}

/// A feed parsed into plain values, ready to be mapped into the store.
public struct ParsedFeed: Sendable, Equatable {
    /// The format the document was parsed as.
    public var kind: FeedKind
    /// The feed's own title (the source's display name).
    public var title: String?
    public var description: String?
    /// The feed's web page (absolute http/https URL).
    public var link: String?
    /// The feed's artwork (absolute http/https URL).
    public var imageURL: String?
    /// Every category path that exists in the feed, root first (e.g. `["news", "local"]`),
    /// without duplicates, in document order. Parents of a path are listed before it.
    public var categories: [[String]]
    /// The items, in document order, duplicates of a content id removed (the first wins).
    public var items: [FeedItem]
    /// The next page of the same catalog (JSON `next`, RSS/Atom `<link rel="next">`).
    public var nextPageURL: String?
    /// A URL template with the placeholder `{id}` that returns one item by content id
    /// (JSON catalogs only).
    public var lookupTemplate: String?
    /// Problems that did not stop the parse (items skipped, URLs dropped, text cut).
    /// Capped at `FeedLimits.maxWarnings`; the last entry then says how many were left out.
    public var warnings: [String]

    public init(
        kind: FeedKind, title: String? = nil, description: String? = nil, link: String? = nil,
        imageURL: String? = nil, categories: [[String]] = [], items: [FeedItem] = [],
        nextPageURL: String? = nil, lookupTemplate: String? = nil, warnings: [String] = []
    ) {
        self.kind = kind
        self.title = title
        self.description = description
        self.link = link
        self.imageURL = imageURL
        self.categories = categories
        self.items = items
        self.nextPageURL = nextPageURL
        self.lookupTemplate = lookupTemplate
        self.warnings = warnings
    }
}

/// One piece of content from a feed.
///
/// Text fields are feed data as given (entities decoded, surrounding whitespace trimmed, cut
/// to `FeedLimits.maxStringBytes`); they may hold `/`, NUL or control characters. Whoever
/// turns them into file names must sanitize them.
public struct FeedItem: Sendable, Equatable {
    /// Unique within the feed: JSON `id`, RSS `<guid>` (else the media URL), Atom `<id>`.
    public var contentID: String
    /// The title; the content id when the feed gives none.
    public var title: String
    public var type: MediaType
    /// Absolute http or https URL of the media.
    public var mediaURL: String
    /// Size in bytes as the feed states it (0 is kept: many feeds write 0 for "unknown").
    public var size: Int64?
    public var mimeType: String?
    /// Duration in seconds.
    public var duration: Double?
    public var publishedAt: Date?
    public var summary: String?
    /// Absolute http or https URL.
    public var thumbnailURL: String?
    /// The thumbnail's size as the feed states it (positive), if it does.
    public var thumbnailSize: Int64?
    public var subtitles: [SubtitleTrack]
    /// Lowercase hex SHA-256 of the media (validated: 64 hex digits).
    public var sha256: String?
    public var licence: LicenceTerms?
    /// Category paths this item belongs to, root first.
    public var categories: [[String]]

    public init(
        contentID: String, title: String, type: MediaType, mediaURL: String, size: Int64? = nil,
        mimeType: String? = nil, duration: Double? = nil, publishedAt: Date? = nil,
        summary: String? = nil, thumbnailURL: String? = nil, thumbnailSize: Int64? = nil, subtitles: [SubtitleTrack] = [],
        sha256: String? = nil, licence: LicenceTerms? = nil, categories: [[String]] = []
    ) {
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
        self.categories = categories
    }
}

/// Subtitle file formats offlinefs serves.
public enum SubtitleFormat: String, Sendable, Codable, CaseIterable {
    case vtt, srt
}

/// One subtitle track of an item.
public struct SubtitleTrack: Sendable, Equatable, Codable {
    /// BCP 47 language tag; `und` when the feed gives none.
    public var language: String
    /// Absolute http or https URL.
    public var url: String
    public var format: SubtitleFormat
    /// Its size as the feed states it (positive), if it does.
    public var size: Int64?

    public init(language: String, url: String, format: SubtitleFormat, size: Int64? = nil) {
        self.language = language
        self.url = url
        self.format = format
        self.size = size
    }
}

/// Licence terms of an item (DESIGN §1 "Licences").
public struct LicenceTerms: Sendable, Equatable, Codable {
    public enum Kind: String, Sendable, Codable, CaseIterable {
        /// Never expires.
        case purchase
        /// Expires `rentalDuration` after acquisition, or `playDuration` after first play,
        /// whichever ends first.
        case rental
    }

    public var kind: Kind
    /// Seconds from acquisition. A rental without it gets its terms from `licenceURL`.
    public var rentalDuration: Double?
    /// Seconds from first playback.
    public var playDuration: Double?
    /// Absolute http or https URL that acquires or renews the licence.
    public var licenceURL: String?

    public init(kind: Kind, rentalDuration: Double? = nil, playDuration: Double? = nil, licenceURL: String? = nil) {
        self.kind = kind
        self.rentalDuration = rentalDuration
        self.playDuration = playDuration
        self.licenceURL = licenceURL
    }
}
