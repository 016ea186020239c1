/// Timeouts of one transfer. Tests set short ones; every wait is bounded.
public struct HTTPTimeouts: Sendable, Equatable {
    /// Seconds to establish the connection.
    public var connect: Double
    /// A transfer slower than `lowSpeedBytesPerSecond` for `lowSpeedSeconds` is a stall.
    public var lowSpeedBytesPerSecond: Int
    public var lowSpeedSeconds: Int
    /// Whole-exchange limit; only for documents (feeds, playlists), never media.
    public var total: Double?

    public init(connect: Double = 15, lowSpeedBytesPerSecond: Int = 1, lowSpeedSeconds: Int = 30, total: Double? = nil) {
        self.connect = connect
        self.lowSpeedBytesPerSecond = lowSpeedBytesPerSecond
        self.lowSpeedSeconds = lowSpeedSeconds
        self.total = total
    }

    /// For feed and playlist documents: a total deadline on top of the stall check.
    public static let document = HTTPTimeouts(total: 120)
    /// For media: no total limit (a large file may take hours), stalls still end it.
    public static let media = HTTPTimeouts()
}

/// Where a request may connect. Public feeds must not reach into this machine or the LAN.
public enum DestinationPolicy: Sendable, Equatable {
    /// Any address: the source's own feed URL is loopback or private (a LAN media server),
    /// or a policy allows it.
    case any
    /// Public addresses only: loopback, link-local, private and unspecified are refused.
    case publicOnly

    /// The policy for everything a source fetches: as open as its own feed URL's host.
    public static func forFeed(host: String) -> DestinationPolicy {
        AddressClass.isNonPublic(host: host) ? .any : .publicOnly
    }
}

/// One HTTP exchange to perform.
public struct HTTPRequest: Sendable {
    public enum Method: String, Sendable { case get = "GET", head = "HEAD" }

    public var url: String
    public var method: Method
    /// Extra request headers as (name, value).
    public var headers: [(String, String)]
    public var range: ByteRange?
    /// Sent with `range`: the strong validator the bytes already held were fetched with.
    public var ifRange: String?
    public var ifNoneMatch: String?
    public var ifModifiedSince: String?
    /// The body may not exceed this many bytes (the transfer is stopped, `tooLarge`).
    public var maxBodyBytes: Int64?
    public var timeouts: HTTPTimeouts
    /// Documents may come compressed; media never (bytes must match the origin's file).
    public var acceptCompressed: Bool
    public var destinationPolicy: DestinationPolicy
    public var maxRedirects: Int
    /// libcurl's receive buffer (`CURLOPT_BUFFERSIZE`): one `recv` takes up to this much of
    /// what has arrived before the body callback sees any of it. Large suits a long transfer
    /// (fewer calls); a request whose first bytes someone waits for gets them sooner with a
    /// small one.
    public var receiveBufferBytes: Int = HTTPRequest.largeReceiveBuffer

    public static let largeReceiveBuffer = 512 << 10
    /// A 64 KiB read's bytes and the response head, from one `recv`.
    public static let smallReceiveBuffer = 80 << 10

    public init(
        url: String,
        method: Method = .get,
        headers: [(String, String)] = [],
        range: ByteRange? = nil,
        ifRange: String? = nil,
        ifNoneMatch: String? = nil,
        ifModifiedSince: String? = nil,
        maxBodyBytes: Int64? = nil,
        timeouts: HTTPTimeouts = .media,
        acceptCompressed: Bool = false,
        destinationPolicy: DestinationPolicy = .any,
        maxRedirects: Int = 5
    ) {
        self.url = url
        self.method = method
        self.headers = headers
        self.range = range
        self.ifRange = ifRange
        self.ifNoneMatch = ifNoneMatch
        self.ifModifiedSince = ifModifiedSince
        self.maxBodyBytes = maxBodyBytes
        self.timeouts = timeouts
        self.acceptCompressed = acceptCompressed
        self.destinationPolicy = destinationPolicy
        self.maxRedirects = maxRedirects
    }

    /// The header lines libcurl sends on top of its own.
    var headerLines: [String] {
        var lines = headers.map { "\($0.0): \($0.1)" }
        if let range { lines.append("Range: \(range.headerValue)") }
        if let ifRange { lines.append("If-Range: \(ifRange)") }
        if let ifNoneMatch { lines.append("If-None-Match: \(ifNoneMatch)") }
        if let ifModifiedSince { lines.append("If-Modified-Since: \(ifModifiedSince)") }
        return lines
    }
}
