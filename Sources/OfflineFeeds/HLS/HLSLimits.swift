/// Caps that keep a hostile playlist from using unbounded memory. Going over one is an
/// error, never a truncation: a stream silently missing its end is worse than a clear error.
public struct HLSLimits: Sendable, Equatable {
    /// Playlists larger than this are refused before any parsing.
    public var maxBytes: Int
    /// Most segments in one media playlist (100 000 one-second segments is 27 hours).
    public var maxSegments: Int
    /// Most `EXT-X-STREAM-INF` in one master playlist.
    public var maxVariants: Int
    /// Most `EXT-X-MEDIA` in one master playlist.
    public var maxRenditions: Int
    /// Longest line, in bytes (without its line break).
    public var maxLineBytes: Int

    public init(
        maxBytes: Int = 4 * 1_048_576,
        maxSegments: Int = 100_000,
        maxVariants: Int = 100,
        maxRenditions: Int = 100,
        maxLineBytes: Int = 65_536
    ) {
        self.maxBytes = maxBytes
        self.maxSegments = maxSegments
        self.maxVariants = maxVariants
        self.maxRenditions = maxRenditions
        self.maxLineBytes = maxLineBytes
    }
}
