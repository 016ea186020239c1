import Foundation

/// Blocking HTTP exchanges over libcurl for documents and probes (feeds, HEAD requests,
/// playlists, licences). Call it from a thread of your own, never from Swift's
/// cooperative pool: every call blocks until the exchange ends or its timeouts fire.
///
/// Long-running media transfers use the engine's transfer loop instead.
public struct HTTPClient: Sendable {
    public var userAgent: String

    public init(userAgent: String = "offlinefs/\(OfflineVersion.string)") {
        self.userAgent = userAgent
    }

    /// Performs one exchange and returns the whole response.
    public func perform(_ request: HTTPRequest) -> Result<HTTPResponse, HTTPError> {
        performAll([request], maxParallel: 1)[0]
    }

    /// Performs many exchanges with at most `maxParallel` in flight (reusing connections),
    /// returning results in the order of `requests`.
    public func performAll(_ requests: [HTTPRequest], maxParallel: Int) -> [Result<HTTPResponse, HTTPError>] {
        var results = [Result<HTTPResponse, HTTPError>?](repeating: nil, count: requests.count)
        let multi: CurlMulti
        do { multi = try CurlMulti() } catch {
            return requests.map { _ in .failure(error) }
        }
        final class Pending {
            let index: Int
            let transfer: CurlTransfer
            var body = Data()
            init(index: Int, transfer: CurlTransfer) { self.index = index; self.transfer = transfer }
        }
        var running: [UnsafeMutableRawPointer: Pending] = [:]
        var next = 0

        func startNext() {
            while running.count < max(1, maxParallel) && next < requests.count {
                let index = next
                next += 1
                do {
                    let transfer = try CurlTransfer(requests[index], userAgent: userAgent)
                    let pending = Pending(index: index, transfer: transfer)
                    // Unowned: the transfer belongs to `pending`, which `running` holds while
                    // the callbacks can run; a strong capture kept both, and every body, forever.
                    transfer.onHead = { [unowned pending] _, headers in
                        // Size the buffer once: growing a 50 MB feed by doubling would
                        // briefly hold twice its size.
                        if let length = headers["content-length"].flatMap({ Int($0) }), length > 0,
                           length <= requests[index].maxBodyBytes.map({ Int($0) }) ?? Int.max {
                            pending.body.reserveCapacity(length)
                        }
                        return true
                    }
                    transfer.onBody = { [unowned pending] bytes in
                        pending.body.append(contentsOf: bytes)
                        return .accept
                    }
                    running[transfer.easy.handle] = pending
                    multi.add(transfer.easy)
                } catch {
                    results[index] = .failure(error)
                }
            }
        }

        startNext()
        while !running.isEmpty {
            _ = multi.perform()
            while let done = multi.nextDone() {
                guard let pending = running.removeValue(forKey: done.easy) else { continue }
                multi.remove(pending.transfer.easy)
                let transfer = pending.transfer
                if let error = transfer.finish(done.result) {
                    results[pending.index] = .failure(error)
                } else {
                    results[pending.index] = .success(HTTPResponse(
                        status: transfer.status, headers: transfer.headers,
                        body: pending.body, effectiveURL: transfer.effectiveURL))
                }
            }
            startNext()
            if !running.isEmpty { multi.poll(milliseconds: 100) }
        }
        return results.map { $0 ?? .failure(HTTPError(.internal, "request was not performed")) }
    }
}
