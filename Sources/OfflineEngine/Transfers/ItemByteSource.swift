import OfflineHTTP

/// Which file of an item a byte range belongs to. The media file is "media"; later,
/// "thumbnail", "subtitle.<lang>" and HLS segment files. Used as a file name in the cache.
public typealias CacheFileKey = String

/// Why bytes could not be had.
public struct FetchError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// The origin could not be reached, or the bound passed first.
        case unavailable
        /// The caller's deadline passed before the bytes arrived.
        case timedOut
        /// The origin answered with an error status or inconsistent bytes.
        case originError
        /// The item is unknown or has no media URL.
        case noSuchItem
        /// Writing the cache failed (disk full, I/O error).
        case cacheWriteFailed
        /// The caller cancelled (e.g. a FUSE interrupt).
        case cancelled
    }

    /// Finer cause, for the item error code a download records (nil: only `code` is known).
    public enum Reason: Sendable, Equatable {
        /// The origin could not be reached (DNS, refused connection).
        case noNetwork
        /// A connect timeout or a stall below the low-speed limit.
        case timeout
        /// Connection reset, a body shorter than promised, an invalid or inconsistent answer
        /// (a 206 at another offset, a wrong total, gzip on a range).
        case network
        /// The origin answered with this 4xx/5xx status.
        case httpStatus(Int)
        /// The origin's file kept changing while it was being fetched.
        case contentChanged
        /// The disk is full.
        case noSpace
        /// The process had no file descriptor to spare (its open-file limit): transient.
        case outOfDescriptors
        /// The URL or where it leads is not allowed (another scheme, a public feed's media on
        /// a private address, a redirect loop): trying again cannot help.
        case refused
    }

    public var code: Code
    public var message: String
    public var reason: Reason?

    public init(_ code: Code, _ message: String, reason: Reason? = nil) {
        self.code = code
        self.message = message
        self.reason = reason
    }

    public var description: String { message }
}

/// A request for bytes that may be cancelled before it completes.
public protocol FetchTicket: Sendable {
    /// Stops waiting; the completion is called with `.cancelled` unless it already ran.
    func cancel()
}

/// How a front end (the FUSE mount, a reader in the CLI) gets bytes of an item file:
/// from the cache file when present, else fetched from the origin into the cache file.
///
/// The front end reads the bytes itself from `cacheFilePath` once told they are there,
/// so cached reads cost a `pread` (or a splice) and nothing more. Implementations never
/// block the caller: FUSE threads must not wait on the network.
public protocol ItemByteSource: Sendable {
    /// The sparse cache file that holds (or will hold) the file's bytes.
    func cacheFilePath(itemID: Int64, file: CacheFileKey) -> String

    /// True when every byte of `range` can be read from the cache file now. Fast (memory only).
    func isAvailable(itemID: Int64, file: CacheFileKey, range: ByteRange) -> Bool

    /// True when every byte of `range` is in the cache file, after writing out those that have
    /// all arrived but still wait in memory for their write (a file just streamed in whole:
    /// an open that would hand the file to the kernel waits the few milliseconds that takes).
    /// May block on local disk writes, never on the network.
    func isWhole(itemID: Int64, file: CacheFileKey, range: ByteRange) -> Bool

    /// Calls `completion` once `range` can be read from the cache file (possibly before the
    /// bytes are flushed to disk), or with an error when they cannot be had by `deadline`.
    /// `readAhead` asks for that many further bytes to be fetched in the same transfer
    /// (sequential readers). `completion` runs on an engine thread, exactly once.
    @discardableResult
    func whenAvailable(
        itemID: Int64, file: CacheFileKey, range: ByteRange, readAhead: Int64,
        deadline: ContinuousClock.Instant,
        completion: @escaping @Sendable (Result<Void, FetchError>) -> Void
    ) -> any FetchTicket

    /// `whenAvailable`, for a reader that can take the bytes from memory (with `bytes`; `nil`
    /// is the plain `whenAvailable`): when all of `range` (cut at the end of the file) has
    /// arrived from the origin and is still in memory, `bytes` is called with it, whether or
    /// not it is in the cache file yet, and `completion` is not called. Otherwise (some bytes
    /// are only in the cache file) `completion` is, as by `whenAvailable`. Exactly one of the
    /// two runs, once, on an engine thread (the transfer's own: a long task belongs elsewhere).
    ///
    /// A reader at the edge of a stream then never makes the engine write a part-filled block
    /// early, and a first read is not held up by the making and writing of a new cache file.
    /// The bytes are claimed in the store only once written and flushed, as ever.
    @discardableResult
    func whenAvailable(
        itemID: Int64, file: CacheFileKey, range: ByteRange, readAhead: Int64,
        deadline: ContinuousClock.Instant,
        bytes: (@Sendable (BytesInMemory) -> Void)?,
        completion: @escaping @Sendable (Result<Void, FetchError>) -> Void
    ) -> any FetchTicket

    /// The bytes of `range` if they are all still in memory (they arrived moments ago; the
    /// file's copy may be on the disk only, written past the page cache), else nil: the front
    /// end then reads the cache file. Fast (memory only), never blocks on I/O.
    func bytesInMemory(itemID: Int64, file: CacheFileKey, range: ByteRange) -> BytesInMemory?

    /// A reader opened the file and will most likely read its start next (players, `file`,
    /// `cat` all do): its first bytes are fetched now, while the open is answered, rather than
    /// once the first read arrives. Never waits on the network; a failure shows at the read
    /// that needs the bytes.
    func startFirstWindow(itemID: Int64, file: CacheFileKey)

    /// A folder holding these items was listed, and a program may read one of them next (a
    /// file manager shows a folder, its user plays a file): a connection to the origin of
    /// their media is opened soon, at most once per origin in a while, so that the first read
    /// does not wait for one. Returns at once (the work runs on an engine thread); items
    /// already cached or being read count for nothing.
    func expectReads(itemIDs: [Int64])

    /// The file's size once the origin has told it (possibly before every byte is here), or
    /// nil. Fast (memory, or one store read the first time a file is touched).
    func knownSize(itemID: Int64, file: CacheFileKey) -> Int64?

    /// Asks the origin the size of each of `files` not known yet (a `HEAD` each, a few at a
    /// time), so a listing shows it before any byte is fetched; `completion` runs once, on
    /// another thread, when all have answered or failed.
    func learnSizes(itemID: Int64, files: [CacheFileKey], completion: @escaping @Sendable () -> Void)

    /// A reader opened / closed the item: an open item is locked against eviction.
    func readerOpened(itemID: Int64)
    func readerClosed(itemID: Int64)

    /// A player opened the item's media (`size` bytes; nil for a piece of an HLS stream): the
    /// session it returns is told the player's reads and ended at the last close. Its reads
    /// start a rental's play clock and set the resume point (docs/playback.md). Nil: nobody
    /// tracks playback.
    func startPlayback(itemID: Int64, size: Int64?) -> PlaybackSession?
}

extension ItemByteSource {
    @discardableResult
    public func whenAvailable(
        itemID: Int64, file: CacheFileKey, range: ByteRange, readAhead: Int64,
        deadline: ContinuousClock.Instant,
        bytes: (@Sendable (BytesInMemory) -> Void)?,
        completion: @escaping @Sendable (Result<Void, FetchError>) -> Void
    ) -> any FetchTicket {
        whenAvailable(itemID: itemID, file: file, range: range, readAhead: readAhead, deadline: deadline,
                      completion: completion)
    }

    public func startPlayback(itemID: Int64, size: Int64?) -> PlaybackSession? { nil }

    public func startFirstWindow(itemID: Int64, file: CacheFileKey) {}

    public func isWhole(itemID: Int64, file: CacheFileKey, range: ByteRange) -> Bool {
        isAvailable(itemID: itemID, file: file, range: range)
    }

    public func bytesInMemory(itemID: Int64, file: CacheFileKey, range: ByteRange) -> BytesInMemory? { nil }

    public func knownSize(itemID: Int64, file: CacheFileKey) -> Int64? { nil }

    public func learnSizes(itemID: Int64, files: [CacheFileKey], completion: @escaping @Sendable () -> Void) {
        completion()
    }
}
