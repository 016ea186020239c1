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
    /// What a reader's open fetches before its first read (`RangeFetcher.startFirstWindow`):
    /// the kernel's first read of a file (its 128 KiB read-ahead), so that the first read
    /// joins the transfer the open started instead of starting another. No more: a program
    /// that reads the start of each file and stops (`head`, a script) keeps 128 KiB of each.
    /// It is asked for exactly (a bounded range), never streamed: a reader that reads past it
    /// gets a streaming fetch from its end.
    public var firstWindow: Int64
    /// A scanner's read of bytes not cached fetches the aligned stretch of this size around
    /// it (within what `scanner-reads` allows): the small reads it makes near one another
    /// then cost one round trip, not one each. 1: exactly what it reads. 256 KiB scanned
    /// fastest on a 40 ms link, against 64 KiB and 1 MiB (docs/perf-log.md).
    public var scannerGranule: Int64
    /// Times an item file may start over because the origin's file changed, before the
    /// fetch fails with `contentChanged`.
    public var maxRestarts: Int
    /// Arriving bytes gather in this many 1 MiB blocks at most, engine-wide, before they go to
    /// the cache files past the page cache (`StagingBlock`); 0: written as they come, through
    /// the page cache. 16: one streaming reader keeps its whole read-ahead (8 MiB) and what it
    /// reads next in memory; four at once share them, each held back while its own blocks are
    /// written. A larger pool made a cold read slower here, not faster (the blocks no longer
    /// fit the CPU's cache between arriving and being read), and cost its size in RSS; four
    /// readers were no faster with 24 (docs/transfers.md, "Pool size").
    public var stagingBlocks: Int
    /// A reader that wants this many bytes at once or more (its read plus its read-ahead)
    /// streams: its fetch asks the origin for the rest of the file and pauses whenever it is
    /// as far ahead as the reader wants, until the reader wants more. One transfer then
    /// serves the whole read, with no new request (and its round trip and slow start) per
    /// read-ahead window. Smaller reads (random access) ask for exactly what they need.
    public var streamBytes: Int64
    /// A fetch paused this long for its reader ends (the reader stopped or went elsewhere);
    /// origins close idle connections too, after a minute or so.
    public var pausedFetchLimit: Duration
    /// After a folder of uncached items is listed, a connection to their origin is opened
    /// ahead of a read (`RangeFetcher.expectReads`), at most once per origin in this
    /// interval; nil: never.
    public var connectionWarmInterval: Duration?
    /// Files nobody reads or fetches whose state (and descriptors) stay for a quick return;
    /// the others are let go (`CachedFileTable`).
    public var idleFilesKept: Int
    /// Cache file descriptors kept open between uses, engine-wide (`CacheDescriptors`): the
    /// mount's descriptor count stays bounded however many files it touched. Fewer under an
    /// open-file limit below 256 (an eighth of it).
    public var cacheDescriptors: Int
    /// Free space on the library's disk that cache writes never take (`DiskRoom`): what the
    /// store needs to record the evictions and commands that free space again, whatever
    /// `free-space-reserve` says. The space check evicts down to it too (`SpaceManager`).
    public var keepFree: Int64

    public init(timeouts: HTTPTimeouts = .media, flushBytes: Int64 = 16 << 20,
                flushInterval: Duration = .milliseconds(100), nearBytes: Int64 = 4 << 20, firstWindow: Int64 = 128 << 10,
                scannerGranule: Int64 = 256 << 10, maxRestarts: Int = 3, stagingBlocks: Int = 16, streamBytes: Int64 = 384 << 10,
                pausedFetchLimit: Duration = .seconds(15), connectionWarmInterval: Duration? = .seconds(30),
                idleFilesKept: Int = 16, cacheDescriptors: Int = 32, keepFree: Int64 = 4 << 20) {
        self.timeouts = timeouts
        self.flushBytes = flushBytes
        self.flushInterval = flushInterval
        self.nearBytes = nearBytes
        self.firstWindow = firstWindow
        self.scannerGranule = scannerGranule
        self.maxRestarts = maxRestarts
        self.stagingBlocks = stagingBlocks
        self.streamBytes = streamBytes
        self.pausedFetchLimit = pausedFetchLimit
        self.connectionWarmInterval = connectionWarmInterval
        self.idleFilesKept = idleFilesKept
        self.cacheDescriptors = cacheDescriptors
        self.keepFree = keepFree
    }
}
