import Foundation

/// A media playlist (RFC 8216 4.3.3): the segments of one variant or rendition, with the
/// byte range, key, map and discontinuity in force for each already resolved.
public struct HLSMediaPlaylist: Sendable, Equatable, Hashable {
    /// `EXT-X-VERSION`, nil when absent.
    public var version: Int?
    /// `EXT-X-TARGETDURATION`, in seconds.
    public var targetDuration: Double
    /// `EXT-X-MEDIA-SEQUENCE`; 0 when absent.
    public var mediaSequence: Int64
    /// `EXT-X-PLAYLIST-TYPE`: `"VOD"` or `"EVENT"`, nil when absent.
    public var playlistType: String?
    /// `EXT-X-ENDLIST`: no segment will be added (a live playlist without it keeps growing).
    public var hasEndList: Bool
    public var segments: [HLSMediaSegment]

    public init(
        version: Int? = nil, targetDuration: Double, mediaSequence: Int64 = 0, playlistType: String? = nil,
        hasEndList: Bool = false, segments: [HLSMediaSegment] = []
    ) {
        self.version = version
        self.targetDuration = targetDuration
        self.mediaSequence = mediaSequence
        self.playlistType = playlistType
        self.hasEndList = hasEndList
        self.segments = segments
    }

    /// The sum of the segment durations, in seconds.
    public var totalDuration: Double { segments.reduce(0) { $0 + $1.duration } }
}

/// One media segment: an `EXTINF` and the URI line after it.
public struct HLSMediaSegment: Sendable, Equatable, Hashable {
    /// The media sequence number: `mediaSequence` plus the segment's index.
    public var sequence: Int64
    /// Absolute, resolved against the playlist URL.
    public var url: URL
    /// `EXTINF` duration, in seconds.
    public var duration: Double
    /// The slice of `url` that is the segment (`EXT-X-BYTERANGE`), with its offset resolved.
    public var byteRange: HLSByteRange?
    /// An `EXT-X-DISCONTINUITY` comes right before this segment.
    public var discontinuity: Bool
    /// The `EXT-X-KEY` in force; nil when none is, or after `METHOD=NONE`.
    public var key: HLSKey?
    /// The `EXT-X-MAP` in force: the fMP4 (or TS) initialization section.
    public var map: HLSMap?
    /// The sum of the durations of the segments before it, in seconds.
    public var startTime: Double

    public init(
        sequence: Int64, url: URL, duration: Double, byteRange: HLSByteRange? = nil, discontinuity: Bool = false,
        key: HLSKey? = nil, map: HLSMap? = nil, startTime: Double = 0
    ) {
        self.sequence = sequence
        self.url = url
        self.duration = duration
        self.byteRange = byteRange
        self.discontinuity = discontinuity
        self.key = key
        self.map = map
        self.startTime = startTime
    }
}

/// A byte range with an absolute offset: the bytes `offset ..< offset + length` of a resource.
public struct HLSByteRange: Sendable, Equatable, Hashable {
    public var offset: Int64
    public var length: Int64

    public init(offset: Int64, length: Int64) {
        self.offset = offset
        self.length = length
    }
}

/// `EXT-X-MAP`: the initialization section segments after it need (the fMP4 `init.mp4`).
public struct HLSMap: Sendable, Equatable, Hashable {
    public var url: URL
    public var byteRange: HLSByteRange?

    public init(url: URL, byteRange: HLSByteRange? = nil) {
        self.url = url
        self.byteRange = byteRange
    }
}

/// A file a media playlist refers to; `HLSMediaPlaylist.rendered(localURI:)` asks for the
/// local name of each.
public enum HLSResource: Sendable, Hashable {
    case segment(HLSMediaSegment)
    case map(HLSMap)
    case key(HLSKey)
}
