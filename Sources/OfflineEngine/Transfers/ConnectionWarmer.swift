import OfflineHTTP
import Synchronization

/// Opens a connection to an origin before a read that may follow (a folder of its items was
/// just listed), by sending it a `HEAD` for one of the items through the transfer loop: the
/// connection then waits in libcurl's connection cache, and the read's first request goes out
/// on it instead of connecting first.
///
/// Why: a new connection costs a round trip (two or three more with TLS) before a request
/// can go; a player that opens a file right after its folder was shown would pay that on its
/// first bytes (docs/reads.md, "The first read of an uncached item", has the measurements).
///
/// The same when a reader's close stopped a transfer that was still receiving: libcurl closes
/// that connection, and a player moving on to the next item would otherwise connect again.
///
/// At most one `HEAD` per origin (scheme, host, port) per `interval` for listings, so that
/// browsing does not become traffic. Its answer, whatever it is, is ignored, and a failure
/// changes nothing (the read that follows connects as it would have).
final class ConnectionWarmer: Sendable {
    private let loop: TransferLoop
    private let interval: Duration
    private let timeouts: HTTPTimeouts
    private let lastSent = Mutex<[String: ContinuousClock.Instant]>([:])
    private let finished = Atomic<Int>(0)
    /// Origins remembered at most; older entries go first once this is passed.
    private static let remembered = 64

    init(loop: TransferLoop, interval: Duration, timeouts: HTTPTimeouts) {
        self.loop = loop
        self.interval = interval
        self.timeouts = timeouts
    }

    /// Sends `origin` a `HEAD` unless its host had one less than `interval` ago, or whatever
    /// the interval when `replacing` (a stopped transfer has just closed a connection to it:
    /// one `HEAD` per closed connection is no added traffic); true when it sent one.
    @discardableResult
    func warm(_ origin: FetchOrigin, replacing: Bool = false) -> Bool {
        guard let host = Self.originKey(origin.url).map(String.init) else { return false }
        let now = ContinuousClock.now
        let due = lastSent.withLock { table -> Bool in
            if !replacing, let last = table[host], now - last < interval { return false }
            if table.count >= Self.remembered {
                table = table.filter { now - $0.value < interval }
                if table.count >= Self.remembered, let oldest = table.min(by: { $0.value < $1.value }) {
                    table[oldest.key] = nil
                }
            }
            table[host] = now
            return true
        }
        guard due else { return false }
        let request = HTTPRequest(url: origin.url, method: .head, timeouts: timeouts,
                                  acceptCompressed: false, destinationPolicy: origin.destinationPolicy)
        _ = loop.start(request, TransferCallbacks(body: { _ in .stop }, complete: { [self] _ in
            finished.add(1, ordering: .relaxed)
        }))
        return true
    }

    /// Warm-ups that have ended, answered or not (tests).
    var finishedCount: Int { finished.load(ordering: .relaxed) }

    /// `scheme://authority` of `url`: the part a connection belongs to. nil for what is not an
    /// absolute URL (nothing is sent for it).
    static func originKey(_ url: String) -> Substring? {
        guard let schemeEnd = url.firstRange(of: "://") else { return nil }
        let rest = url[schemeEnd.upperBound...]
        let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        guard end > rest.startIndex else { return nil }
        return url[url.startIndex..<end]
    }
}
