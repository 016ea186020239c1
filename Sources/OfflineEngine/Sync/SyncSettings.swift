public import OfflineFeeds
public import OfflineHTTP

/// Bounds of one sync. Defaults are DESIGN §4's; tests set them low.
public struct SyncSettings: Sendable {
    /// Caps on each feed document (size, items, JSON depth, parse deadline).
    public var feedLimits = FeedLimits()
    /// Most `next` pages followed for one catalog (a loop or an endless catalog stops here).
    public var maxPages = 10_000
    /// HEAD requests in flight when sizing items whose feed gives no size.
    public var sizeProbeParallelism = 8
    /// A side file (thumbnail, subtitles) whose HEAD gives no length is fetched to count it,
    /// up to this many bytes, this many at once (each body is held in memory meanwhile).
    public var sideFileFetchCap: Int64 = 16 << 20
    public var sideFileFetchParallelism = 2
    public var documentTimeouts = HTTPTimeouts.document
    public var probeTimeouts = HTTPTimeouts(connect: 10, lowSpeedBytesPerSecond: 1, lowSpeedSeconds: 15, total: 30)

    public init() {}
}
