/// One open file's reads as the engine sees them: whether they go on in order, how far to
/// fetch ahead of them, and when to ask for the next stretch before the reader needs it.
///
/// A reader that continues where it stopped gets a growing read-ahead, at most a few times
/// what it has read in order so far; a jump resets it (the fetcher then starts a new range
/// instead of filling the gap). Scanners and probers read pieces and get none. Not
/// thread-safe: the open file holds it under its lock.
public struct ReadPattern: Sendable {
    /// Read-ahead for the first sequential read, doubled on each next one up to
    /// `maxReadAhead`. 8 MiB is most of a second of a 100 Mbit/s origin; 16 MiB made a cold
    /// read no faster and held twice the staging blocks (docs/transfers.md).
    public static let firstReadAhead: Int64 = 256 << 10
    public static let maxReadAhead: Int64 = 8 << 20
    /// How far before or after the last read's end a read still counts as sequential: the
    /// kernel's read-ahead sends several reads at once, which libfuse's threads may hand over
    /// out of order.
    public static let reorderSlack: Int64 = 1 << 20
    /// Read-ahead is at most this many times the bytes read in order so far: doubling per
    /// read alone took a program that reads 8 KiB at a time (`head -c 65536`) to 8 MiB of
    /// read-ahead within its first 64 KiB, and fetched whole files it never read.
    public static let readAheadPerByteRead: Int64 = 4

    let readerClass: ReaderClass
    /// The file's size; nil while unknown (no prefetch then). The origin's, once it told
    /// another than the open was given.
    var size: Int64?
    private var nextOffset: Int64 = -1
    /// Where the current run of reads in order began.
    private var runStart: Int64 = 0
    private var readAhead: Int64 = 0
    /// End of the bytes last asked of the engine for this reader.
    private var askedUpTo: Int64 = 0

    public init(readerClass: ReaderClass, size: Int64?) {
        self.readerClass = readerClass
        self.size = size
    }

    /// Whether the last read of a scanner or a prober began where the one before ended: it
    /// reads on through the file (`mediainfo`, a thumbnailer decoding after its seek).
    public private(set) var continues = false

    /// Whether the last read left a sequential reader's run (a player's seek or chapter jump):
    /// what its read-ahead asked for is not what it reads next. A jump within the read-ahead's
    /// reach too: on a slow link the stream would get there only after seconds.
    public private(set) var jumped = false

    /// Notes a read of `offset..<end`; returns how much to fetch beyond it.
    public mutating func read(offset: Int64, end: Int64) -> Int64 {
        if readerClass.readsPieces {
            continues = offset == nextOffset
            nextOffset = end
            return 0
        }
        jumped = readAhead > 0 && abs(offset - nextOffset) > Self.reorderSlack
        if nextOffset >= 0 && abs(offset - nextOffset) <= Self.reorderSlack {
            nextOffset = max(nextOffset, end)
            let earned = max(Self.firstReadAhead, (nextOffset - runStart) * Self.readAheadPerByteRead)
            readAhead = min(max(readAhead * 2, Self.firstReadAhead), Self.maxReadAhead, earned)
        } else {
            readAhead = 0  // a first read proves nothing; the next one in order does
            runStart = offset
            nextOffset = end
            askedUpTo = 0
        }
        return readAhead
    }

    /// For a sequential reader at `end` with `readAhead`: the bytes to ask for now, once it
    /// has come within half its read-ahead of what it asked for last, so that the next
    /// transfer runs before the current one ends (no pause between the two).
    public mutating func prefetch(end: Int64, readAhead: Int64) -> Range<Int64>? {
        guard readAhead > 0, let size, askedUpTo < size, askedUpTo - end < readAhead / 2 else { return nil }
        let range = max(askedUpTo, end)..<min(size, end + readAhead)
        guard !range.isEmpty else { return nil }
        askedUpTo = range.upperBound
        return range
    }
}
