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
    /// is not in the variant's own segments), the audio languages asked for, its subtitles.
    public var renditions: [HLSRenditionRecord]
    /// The `audio=` languages it was chosen for (`en,fr`; nil: the default audio only).
    public var audioLanguages: String?
    /// Every variant of the master playlist (empty for a lone media playlist).
    public var variants: [HLSVariantRecord]
    public var chosenAt: Date

    public init(itemID: Int64, playlistURL: String, playlist: Data, quality: String? = nil, bandwidth: Int? = nil,
                resolution: String? = nil, codecs: String? = nil, estimatedSize: Int64? = nil,
                renditions: [HLSRenditionRecord] = [], audioLanguages: String? = nil, variants: [HLSVariantRecord] = [],
                chosenAt: Date) {
        self.audioLanguages = audioLanguages
        self.variants = variants
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

extension HLSStreamRecord {
    /// Whether it is the rendition a download with these stored choices wants.
    public func isChoice(quality: String?, audio: String?) -> Bool {
        self.quality == quality && audioLanguages == audio
    }

    /// Whether `variant` is the one chosen.
    public func isChosen(_ variant: HLSVariantRecord) -> Bool {
        variant.bandwidth == bandwidth && variant.resolution == resolution && variant.codecs == codecs
    }
}

/// One variant of a master playlist, as `offlinefs variants` lists it.
public struct HLSVariantRecord: Sendable, Equatable, Codable {
    /// `BANDWIDTH` (peak) and `AVERAGE-BANDWIDTH`, bits per second.
    public var bandwidth: Int
    public var averageBandwidth: Int?
    /// `RESOLUTION` as `<width>x<height>`.
    public var resolution: String?
    public var codecs: String?
    /// Bytes for the whole stream: (average) bandwidth × duration.
    public var estimatedSize: Int64?
    /// Languages of its audio group's alternate renditions (what `audio=` can ask for).
    public var audioLanguages: [String]

    public init(bandwidth: Int, averageBandwidth: Int? = nil, resolution: String? = nil, codecs: String? = nil,
                estimatedSize: Int64? = nil, audioLanguages: [String] = []) {
        self.bandwidth = bandwidth
        self.averageBandwidth = averageBandwidth
        self.resolution = resolution
        self.codecs = codecs
        self.estimatedSize = estimatedSize
        self.audioLanguages = audioLanguages
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
