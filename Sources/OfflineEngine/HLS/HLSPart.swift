/// One file an HLS item offers in the mount's `.hls/<item id>/` folder: a segment, an init
/// segment (`EXT-X-MAP`) or a key, named after its role and keeping the origin's extension
/// (`17.ts`, `init.mp4`, `key`) so players recognise it.
public struct HLSPart: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        /// Segment number `index` of the media playlist (0-based, not the media sequence).
        case segment(index: Int)
        case initSegment
        case key
    }

    public var name: String
    public var kind: Kind
    /// The cache file that holds its bytes: one per distinct origin URL (`hls.<n>`).
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
