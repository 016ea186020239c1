import Foundation

/// The rendition of an HLS item the engine chose to fetch: its media playlist exactly as the
/// origin served it (parsed again when loaded), and the variant it belongs to. Kept until the
/// item is evicted, cancelled or asked for at another quality, so segment names and cache
/// files stay the same across restarts.
public struct HLSStreamRecord: Sendable, Equatable {
    public var itemID: Int64
    /// Where the media playlist came from (after redirects): relative URIs resolve against it.
    public var playlistURL: String
    public var playlist: Data
    /// The `quality` it was chosen for (nil: the default, highest the policies allow).
    public var quality: String?
    /// The variant's `BANDWIDTH`, `RESOLUTION` and `CODECS` (nil for a lone media playlist).
    public var bandwidth: Int?
    public var resolution: String?
    public var codecs: String?
    /// Bytes expected before every segment is here: exact from byte ranges, else
    /// bandwidth × duration.
    public var estimatedSize: Int64?
    /// The variant's alternate renditions fetched with it: its default audio (when the audio
    /// is not in the variant's own segments) and its subtitles.
    public var renditions: [HLSRenditionRecord]
    public var chosenAt: Date

    public init(itemID: Int64, playlistURL: String, playlist: Data, quality: String? = nil, bandwidth: Int? = nil,
                resolution: String? = nil, codecs: String? = nil, estimatedSize: Int64? = nil,
                renditions: [HLSRenditionRecord] = [], chosenAt: Date) {
        self.itemID = itemID
        self.playlistURL = playlistURL
        self.playlist = playlist
        self.quality = quality
        self.bandwidth = bandwidth
        self.resolution = resolution
        self.codecs = codecs
        self.estimatedSize = estimatedSize
        self.renditions = renditions
        self.chosenAt = chosenAt
    }
}

/// An alternate rendition (`EXT-X-MEDIA`) of a chosen variant, with its media playlist as
/// the origin served it.
public struct HLSRenditionRecord: Sendable, Equatable, Codable {
    public enum Kind: String, Sendable, Codable { case audio, subtitles }

    public var kind: Kind
    public var groupID: String
    public var name: String
    public var language: String?
    public var isDefault: Bool
    public var playlistURL: String
    public var playlist: Data

    public init(kind: Kind, groupID: String, name: String, language: String?, isDefault: Bool, playlistURL: String,
                playlist: Data) {
        self.kind = kind
        self.groupID = groupID
        self.name = name
        self.language = language
        self.isDefault = isDefault
        self.playlistURL = playlistURL
        self.playlist = playlist
    }
}
