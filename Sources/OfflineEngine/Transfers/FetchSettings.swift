import OfflineHTTP

/// Tuning of the range fetcher. Defaults suit real use; tests shorten the timeouts.
public struct FetchSettings: Sendable {
    /// Connect and stall limits of media transfers.
    public var timeouts: HTTPTimeouts
    /// Flush (fdatasync + commit) an item file once this many bytes are unflushed …
    public var flushBytes: Int64
    /// … or once its oldest unflushed byte is this old.
    public var flushInterval: Duration
    /// A wanted byte further than this ahead of a running transfer's position gets a
    /// transfer of its own (a seek) instead of waiting for the running one to get there.
    public var nearBytes: Int64
    /// Times an item file may start over because the origin's file changed, before the
    /// fetch fails with `contentChanged`.
    public var maxRestarts: Int

    public init(timeouts: HTTPTimeouts = .media, flushBytes: Int64 = 16 << 20,
                flushInterval: Duration = .milliseconds(100), nearBytes: Int64 = 4 << 20, maxRestarts: Int = 3) {
        self.timeouts = timeouts
        self.flushBytes = flushBytes
        self.flushInterval = flushInterval
        self.nearBytes = nearBytes
        self.maxRestarts = maxRestarts
    }
}
