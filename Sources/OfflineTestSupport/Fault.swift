/// A misbehaviour the origin injects into its answers for one path (`TestOrigin.setFault`).
///
/// Faults that change a range answer (`ignoreRange`, `wrongOffset`, `wrongTotal`,
/// `gzipOnRange`, `shortRangeAtEnd`, `rangeNotSatisfiable`) apply only to GET requests that
/// carry a satisfiable single `Range`; other requests are answered normally. The rest apply to
/// every request for the path. Several faults on one path combine (e.g. `latency` + `trickle`).
public enum Fault: Sendable, Hashable {
    /// Answer with this status and a short text body (e.g. 403, 404, 500, 503).
    case status(Int)
    /// Answer `503 Service Unavailable` with `Retry-After: <seconds>` (an origin that is busy).
    case busy(retryAfter: Int)
    /// Answer a range request with `200` and the full body.
    case ignoreRange
    /// Answer `206` whose `Content-Range` and body both start `delta` bytes away from the
    /// asked offset (clamped into the content), with the asked length where possible.
    case wrongOffset(Int64)
    /// Answer `206` with the right bytes but this total in `Content-Range: bytes a-b/<total>`.
    case wrongTotal(Int64)
    /// Send headers with the full `Content-Length`, then only this many body bytes, then
    /// close the connection (FIN).
    case truncate(afterBytes: Int64)
    /// Send this many body bytes, then reset the connection (SO_LINGER 0 + close, an RST).
    /// Bytes still in the kernel buffers may be discarded by the reset, so the client can
    /// see fewer than `afterBytes`.
    case reset(afterBytes: Int64)
    /// Send the body without `Content-Length` (`Connection: close`), then close: the client
    /// only learns the length from the end of the stream.
    case noContentLength
    /// Send the headers, then nothing for this many seconds or until `releaseStalls()`;
    /// the rest of the body follows.
    case stall(seconds: Double)
    /// Read the request, then send nothing for this many seconds or until `releaseStalls()`.
    case stallBeforeHeaders(seconds: Double)
    /// Send the body at about this rate (in chunks of a tenth of a second).
    case trickle(bytesPerSecond: Int)
    /// Wait this long before answering (not released by `releaseStalls()`).
    case latency(milliseconds: Int)
    /// Give every answer a new ETag (`"<tag>-r<n>"`): the content "changed" although the
    /// bytes did not. `If-Range` then never matches and `If-None-Match` never gives 304.
    case changeETagEachRequest
    /// Answer a range request `206` with `Content-Encoding: gzip` over the *identity* bytes
    /// (a fake gzip: the body is not compressed; the wrong header is the point).
    case gzipOnRange
    /// Answer a range request `206` that ends `missing` bytes before the asked (or file) end,
    /// with self-consistent `Content-Range`/`Content-Length` and the true total: the body is
    /// shorter than the range asked. At least one byte is sent.
    case shortRangeAtEnd(missing: Int64)
    /// Answer a range request `416` with `Content-Range: bytes */<size>` even if satisfiable.
    case rangeNotSatisfiable
    /// Close the connection after reading the request, sending nothing (curl: "Empty reply").
    case closeWithoutResponse
    /// Send a status line that is not HTTP, then close.
    case malformedResponse
}

/// A fault registered for a path, with how many more requests it applies to.
struct FaultEntry: Sendable {
    var fault: Fault
    /// `nil`: until cleared.
    var remaining: Int?
}
