public import OfflineFeeds

/// One file an HLS item offers in the mount's `.hls/<item id>/` folder: a segment, an init
/// segment (`EXT-X-MAP`), a key, or a track's playlist, named after its role and keeping the
/// origin's extension (`17.ts`, `init.mp4`, `key`) so players recognise it.
public struct HLSPart: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        /// Segment number `index` (0-based, not the media sequence) of track `track`.
        case segment(track: Int, index: Int)
        case initSegment
        case key
        /// The local media playlist of track `track` (only when the stream has several
        /// tracks: the item's own file is then a master playlist naming them).
        case playlist(track: Int)
    }

    public var name: String
    public var kind: Kind
    /// The cache file that holds its bytes: one per distinct origin URL (`hls.<n>`); empty
    /// for a playlist, which is made from the stream.
    public var resource: CacheFileKey
    /// The slice of that file it is (`EXT-X-BYTERANGE`); nil: the whole file.
    public var range: Range<Int64>?

    public var isSegment: Bool {
        if case .segment = kind { return true }
        return false
    }
}

/// The container of a stream's segments, which names its one-file view.
public enum HLSContainer: String, Sendable {
    /// MPEG transport stream segments: concatenated they are one `.ts` file.
    case mpegTS = "ts"
    /// Fragmented MP4 (`EXT-X-MAP` init segment + `.m4s` fragments): one `.mp4` file.
    case fragmentedMP4 = "mp4"
    /// Packed audio (`.aac`, `.mp3`, `.ac3`): concatenated they still play.
    case aac, mp3, ac3
}

/// One media playlist of a stream: the variant's own (track 0), or an alternate audio or
/// subtitles rendition fetched with it.
public struct HLSTrack: Sendable {
    public enum Kind: Sendable, Equatable { case main, audio, subtitles }

    public var kind: Kind
    public var playlist: HLSMediaPlaylist
    /// `EXT-X-MEDIA` attributes of a rendition (nil for the main track).
    public var rendition: HLSRenditionRecordSummary?
    /// Prefix of its part names (`""`, `audio-`, `subtitles-1-`).
    public var prefix: String
    /// Its local playlist's name inside `.hls/<id>/` when the stream has several tracks.
    public var playlistName: String
}

/// What the local master playlist says of a rendition.
public struct HLSRenditionRecordSummary: Sendable {
    public var groupID: String
    public var name: String
    public var language: String?
    public var isDefault: Bool
}
