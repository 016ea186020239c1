import Foundation

/// A real HTTP/1.1 server inside the test process, on 127.0.0.1, with scriptable faults.
///
/// It serves registered resources with GET and HEAD, single byte ranges (`a-b`, `a-`, `-n`),
/// `If-Range`, `If-None-Match`/`If-Modified-Since` (304), 416 with `bytes */len`, redirects
/// and keep-alive, and records every request. Faults (`setFault`) make answers misbehave the
/// way real origins and proxies do (see `Fault`); `goOffline()` makes it a dead origin.
///
/// ```swift
/// let origin = try TestOrigin()
/// origin.serve("/video.mp4", .generated(size: 256 << 20, seed: 7, contentType: "video/mp4"))
/// origin.setFault("/video.mp4", .truncate(afterBytes: 1000), times: 1)
/// // ... the client under test fetches origin.url("/video.mp4") ...
/// #expect(origin.requests(for: "/video.mp4").map(\.status) == [200, 206])
/// ```
///
/// Matching: a resource registered with a query (`/feed?page=2`) matches only that exact
/// path and query; one registered without a query matches its path with any query. A path
/// also matches its percent-decoded form (`/a b.mp4` answers `/a%20b.mp4`). Faults are
/// matched the same way. Multiple ranges (`bytes=0-1,5-6`) are answered 200 with the full
/// body. Request bodies are read and ignored; methods other than GET/HEAD get 405.
///
/// Threads: one accept thread, one thread per connection. All methods are thread-safe and
/// take effect for the next request. `stop()` (also run by `deinit`) closes everything.
public final class TestOrigin: Sendable {
    private let server: OriginServer
    private let registry: OriginRegistry

    /// Starts listening on 127.0.0.1:`port` (0: a free port chosen by the kernel).
    public init(port: UInt16 = 0) throws(TestOriginError) {
        registry = OriginRegistry()
        server = try OriginServer(port: port, registry: registry)
    }

    deinit { server.stop() }

    // MARK: Address

    /// The listening port (kept across `goOffline()`/`goOnline()`).
    public var port: UInt16 { server.port }

    /// `http://127.0.0.1:<port>`.
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// The absolute URL of `path` (which should start with `/`).
    public func url(_ path: String) -> String { baseURL + path }

    // MARK: Content

    /// Serves `resource` at `path` (replacing any resource or redirect there).
    public func serve(_ path: String, _ resource: Resource) {
        registry.setRoute(path, .resource(resource))
    }

    /// Replaces the content at `path`: "the origin content changed". The new resource's default
    /// ETag differs whenever its content identity does; give an explicit `etag` to test a
    /// same-size change with a new tag.
    public func changeContent(_ path: String, _ resource: Resource) {
        serve(path, resource)
    }

    /// Stops serving `path` (404 from now on).
    public func remove(_ path: String) {
        registry.setRoute(path, nil)
    }

    /// Answers `path` with a redirect to `location` (absolute or relative, sent as given);
    /// chains and loops are possible by registering several.
    public func redirect(from path: String, to location: String, status: Int = 302) {
        registry.setRoute(path, .redirect(location: location, status: status))
    }

    /// Serves an RSS or Atom document; returns its URL.
    @discardableResult
    public func serveFeed(path: String, xml: String, contentType: String = "application/rss+xml; charset=utf-8") -> String {
        serve(path, .text(xml, contentType: contentType))
        return url(path)
    }

    /// Serves a JSON catalog; returns its URL.
    @discardableResult
    public func serveFeed(path: String, json: String) -> String {
        serve(path, .text(json, contentType: "application/json"))
        return url(path)
    }

    /// The bytes of `GeneratedBytes(size:seed:)` in `range` (default: all), i.e. what the
    /// origin sends for `.generated(size:seed:)`.
    public static func generatedBytes(size: Int64, seed: UInt64, range: Range<Int64>? = nil) -> Data {
        GeneratedBytes(size: size, seed: seed).bytes(in: range)
    }

    // MARK: Faults

    /// Adds `fault` for requests to `path` (registered resource or not), for the next `times`
    /// requests or, with `nil`, until cleared. Faults added to one path combine.
    public func setFault(_ path: String, _ fault: Fault, times: Int? = nil) {
        registry.addFault(path, fault, times: times)
    }

    /// Removes the faults of `path`, or of every path when `nil`.
    public func clearFaults(_ path: String? = nil) {
        registry.clearFaults(path)
    }

    /// Ends every `stall`/`stallBeforeHeaders` in progress; those answers then continue.
    public func releaseStalls() {
        server.gate.releaseAll()
    }

    /// Simulates a dead origin: the listener closes (connections are refused) and open
    /// connections are reset. Returns once the port is released.
    public func goOffline() {
        server.goOffline()
    }

    /// Listens again on the same port after `goOffline()`. Throws if another process took
    /// the port meanwhile.
    public func goOnline() throws(TestOriginError) {
        try server.goOnline()
    }

    /// Whether `goOffline()` is in effect.
    public var isOffline: Bool { server.isOffline }

    // MARK: Log

    /// Every request so far (since `clearLog()`), in arrival order. Only requests that could
    /// be parsed are recorded; a malformed head is answered 400 and not logged.
    public var requests: [RecordedRequest] { registry.log }

    /// The requests whose path (or path and query) is `path`.
    public func requests(for path: String) -> [RecordedRequest] {
        registry.log.filter { $0.path == path || $0.target == path }
    }

    /// Empties the request log and zeroes the byte counters.
    public func clearLog() {
        registry.clearLog()
    }

    /// Body bytes handed to the kernel for sending, over all requests (headers excluded).
    public var bodyBytesSent: Int64 { registry.bodyBytesSent }

    /// The most requests to `path` (without query) that were being answered at once, from
    /// their head's arrival to their last byte sent (not reset by `clearLog`).
    public func mostAtOnce(for path: String) -> Int { registry.mostAtOnce(path: path) }

    /// Body bytes sent for requests to `path` (without query).
    public func bodyBytesSent(for path: String) -> Int64 { registry.bodyBytesSent(path: path) }

    // MARK: Lifecycle

    /// Closes the listener and all connections, ends stalls and waits for the threads.
    /// Idempotent; the port is free when it returns.
    public func stop() {
        server.stop()
    }
}
