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
    /// The origin is busy (429, 503): ask again after this many seconds (its `Retry-After`,
    /// 0 when it did not say). Not a failure of the item: retried without spending `retry-limit`.
    public var retryAfter: Double?

    public init(_ code: Code, _ message: String, reason: Reason? = nil) {
        self.code = code
        self.message = message
        self.reason = reason
    }

    public var description: String { message }

    /// The origin could not be had for now (not reached, cut off, or a gateway's 502–504):
    /// asking again a moment later may get the bytes.
    var isOutage: Bool {
        switch reason {
        case .noNetwork?, .timeout?, .network?: code == .unavailable
        case .httpStatus(let status)?: (502...504).contains(status) || status == 429
        default: false
        }
    }
}

/// A request for bytes that may be cancelled before it completes.
public protocol FetchTicket: Sendable {
    /// Stops waiting; the completion is called with `.cancelled` unless it already ran.
    func cancel()
}
