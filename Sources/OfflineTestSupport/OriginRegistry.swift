import Foundation
import Synchronization

/// What a registered path answers.
enum Route: Sendable {
    case resource(Resource)
    case redirect(location: String, status: Int)
}

/// The origin's shared tables: routes, faults, the request log and counters. Connection
/// threads read and update it; tests change it at any time. One lock, held only for table
/// operations (never while doing I/O).
final class OriginRegistry: Sendable {
    private struct State {
        var routes: [String: Route] = [:]
        var faults: [String: [FaultEntry]] = [:]
        var log: [RecordedRequest] = []
        var sequence = 0
        var bodyBytesSent: Int64 = 0
        var bodyBytesByPath: [String: Int64] = [:]
        var etagRevisions: [String: Int] = [:]
        /// Requests being answered now, and the most there were at once, by path.
        var answering: [String: Int] = [:]
        var mostAtOnce: [String: Int] = [:]
    }

    private let state = Mutex(State())  // protects every table above

    // MARK: Routes

    func setRoute(_ key: String, _ route: Route?) {
        state.withLock { $0.routes[key] = route }
    }

    /// The route for a request: an exact match of path+query first, then the path alone,
    /// then the percent-decoded path (so `/a b.mp4` registered matches `/a%20b.mp4` sent).
    func route(for request: HTTPRequest) -> (key: String, route: Route)? {
        state.withLock { state in
            for key in Self.keys(for: request) {
                if let route = state.routes[key] { return (key, route) }
            }
            return nil
        }
    }

    static func keys(for request: HTTPRequest) -> [String] {
        var keys = [request.target]
        if request.path != request.target { keys.append(request.path) }
        if let decoded = request.path.removingPercentEncoding, !keys.contains(decoded) { keys.append(decoded) }
        return keys
    }

    // MARK: Faults

    func addFault(_ key: String, _ fault: Fault, times: Int?) {
        precondition(times.map { $0 > 0 } ?? true, "setFault: times must be positive")
        state.withLock { $0.faults[key, default: []].append(FaultEntry(fault: fault, remaining: times)) }
    }

    func clearFaults(_ key: String?) {
        state.withLock { state in
            if let key { state.faults[key] = nil } else { state.faults.removeAll() }
        }
    }

    /// The faults that apply to this request, consuming one use of each limited fault. Faults
    /// of the first matching key (same order as routes) are used.
    func takeFaults(for request: HTTPRequest) -> [Fault] {
        state.withLock { state in
            for key in Self.keys(for: request) {
                guard let entries = state.faults[key], !entries.isEmpty else { continue }
                let faults = entries.map(\.fault)
                state.faults[key] = entries.compactMap { entry in
                    guard let remaining = entry.remaining else { return entry }
                    return remaining > 1 ? FaultEntry(fault: entry.fault, remaining: remaining - 1) : nil
                }
                return faults
            }
            return []
        }
    }

    /// A new revision number for `.changeETagEachRequest` on `key`.
    func nextETagRevision(_ key: String) -> Int {
        state.withLock { state in
            state.etagRevisions[key, default: 0] += 1
            return state.etagRevisions[key, default: 0]
        }
    }

    // MARK: Log and counters

    func record(_ request: HTTPRequest, connection: Int, status: Int, faults: [Fault], time: Date) {
        var headers: [String: String] = [:]
        for (name, value) in request.headers {
            headers[name] = headers[name].map { "\($0), \(value)" } ?? value
        }
        let range = request.header("range").flatMap(RangeHeader.parse)
        state.withLock { state in
            state.sequence += 1
            state.log.append(RecordedRequest(
                sequence: state.sequence, connection: connection, method: request.method,
                target: request.target, path: request.path, headers: headers, range: range,
                status: status, faults: faults, time: time))
        }
    }

    var log: [RecordedRequest] { state.withLock { $0.log } }

    /// A request to `path` is being answered until `answered`.
    func answering(path: String) {
        state.withLock { state in
            state.answering[path, default: 0] += 1
            state.mostAtOnce[path] = max(state.mostAtOnce[path] ?? 0, state.answering[path]!)
        }
    }

    func answered(path: String) {
        state.withLock { $0.answering[path, default: 1] -= 1 }
    }

    func mostAtOnce(path: String) -> Int { state.withLock { $0.mostAtOnce[path] ?? 0 } }

    /// Empties the log and zeroes the byte counters.
    func clearLog() {
        state.withLock { state in
            state.log.removeAll()
            state.bodyBytesSent = 0
            state.bodyBytesByPath.removeAll()
        }
    }

    /// Counted before each send (and corrected after a failed one) so that when a client
    /// has received the bytes, the counter already includes them.
    func addBodyBytes(_ count: Int64, path: String) {
        state.withLock { state in
            state.bodyBytesSent += count
            state.bodyBytesByPath[path, default: 0] += count
        }
    }

    var bodyBytesSent: Int64 { state.withLock { $0.bodyBytesSent } }

    func bodyBytesSent(path: String) -> Int64 { state.withLock { $0.bodyBytesByPath[path] ?? 0 } }
}
