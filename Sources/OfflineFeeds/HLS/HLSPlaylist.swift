import Foundation

/// An HLS playlist (RFC 8216): either a master playlist listing variants, or a media
/// playlist listing segments. `HLSParser.parse` tells which from the tags it holds.
public enum HLSPlaylist: Sendable, Equatable {
    case master(HLSMasterPlaylist)
    case media(HLSMediaPlaylist)
}

/// A master playlist (RFC 8216 4.3.4): the variants of one stream and their renditions.
public struct HLSMasterPlaylist: Sendable, Equatable, Hashable {
    /// `EXT-X-STREAM-INF`, in file order.
    public var variants: [HLSVariant]
    /// `EXT-X-MEDIA`, in file order.
    public var renditions: [HLSRendition]

    public init(variants: [HLSVariant], renditions: [HLSRendition] = []) {
        self.variants = variants
        self.renditions = renditions
    }
}

/// One `EXT-X-STREAM-INF` and the media playlist URI on the line after it.
public struct HLSVariant: Sendable, Equatable, Hashable {
    /// Absolute, resolved against the playlist URL.
    public var url: URL
    /// `BANDWIDTH`: peak bits per second (required by the RFC and by the parser).
    public var bandwidth: Int
    /// `AVERAGE-BANDWIDTH`.
    public var averageBandwidth: Int?
    public var resolution: HLSResolution?
    /// `CODECS`, as written (`"avc1.4d401f,mp4a.40.2"`).
    public var codecs: String?
    /// `FRAME-RATE`.
    public var frameRate: Double?
    /// `AUDIO`: the `GROUP-ID` of the `EXT-X-MEDIA` audio renditions this variant plays with.
    public var audioGroup: String?
    /// `SUBTITLES`: the `GROUP-ID` of its subtitle renditions.
    public var subtitlesGroup: String?

    public init(
        url: URL, bandwidth: Int, averageBandwidth: Int? = nil, resolution: HLSResolution? = nil, codecs: String? = nil,
        frameRate: Double? = nil, audioGroup: String? = nil, subtitlesGroup: String? = nil
    ) {
        self.url = url
        self.bandwidth = bandwidth
        self.averageBandwidth = averageBandwidth
        self.resolution = resolution
        self.codecs = codecs
        self.frameRate = frameRate
        self.audioGroup = audioGroup
        self.subtitlesGroup = subtitlesGroup
    }
}

/// `RESOLUTION=<width>x<height>`, in pixels.
public struct HLSResolution: Sendable, Equatable, Hashable {
    public var width: Int
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }
}

/// One `EXT-X-MEDIA`: an alternative audio, video, subtitle or caption track.
public struct HLSRendition: Sendable, Equatable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        case audio = "AUDIO"
        case video = "VIDEO"
        case subtitles = "SUBTITLES"
        case closedCaptions = "CLOSED-CAPTIONS"
    }

    public var kind: Kind
    public var groupID: String
    public var name: String
    public var language: String?
    public var isDefault: Bool
    public var autoselect: Bool
    /// Absolute; nil when the rendition is muxed into the variant (and always for captions).
    public var url: URL?

    public init(
        kind: Kind, groupID: String, name: String, language: String? = nil, isDefault: Bool = false, autoselect: Bool = false,
        url: URL? = nil
    ) {
        self.kind = kind
        self.groupID = groupID
        self.name = name
        self.language = language
        self.isDefault = isDefault
        self.autoselect = autoselect
        self.url = url
    }
}
