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
    public var chosenAt: Date

    public init(itemID: Int64, playlistURL: String, playlist: Data, quality: String? = nil, bandwidth: Int? = nil,
                resolution: String? = nil, codecs: String? = nil, estimatedSize: Int64? = nil, chosenAt: Date) {
        self.itemID = itemID
        self.playlistURL = playlistURL
        self.playlist = playlist
        self.quality = quality
        self.bandwidth = bandwidth
        self.resolution = resolution
        self.codecs = codecs
        self.estimatedSize = estimatedSize
        self.chosenAt = chosenAt
    }
}
