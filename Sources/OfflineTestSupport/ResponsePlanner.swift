import Foundation

/// The representation a resource answers with, once its size is known.
struct Entity: Sendable {
    var length: Int64
    var etag: String
    /// Whole seconds since the epoch (HTTP dates have no finer resolution).
    var lastModified: Int64
    var contentType: String
    var extraHeaders: [(name: String, value: String)]
}

/// Everything the connection needs to write one answer; built by `ResponsePlanner`.
struct ResponsePlan: Sendable {
    var status: Int
    var headers: [(name: String, value: String)] = []
    /// Body for answers that are not the entity (errors, redirects, faults).
    var textBody: [UInt8] = []
    /// Entity bytes to send, when the answer carries the entity.
    var entityRange: Range<Int64>?
    /// False for HEAD and 304: headers only.
    var sendsBody = true
    /// Close the connection after this answer.
    var close = false
    /// Stop after this many body bytes (truncate/reset faults).
    var cutAfter: Int64?
    var resetOnCut = false
    /// Send a non-HTTP status line (the malformedResponse fault).
    var malformed = false

    var bodyLength: Int64 { entityRange.map { Int64($0.count) } ?? Int64(textBody.count) }
}

/// Decides status, headers and body range for a request: a pure function of the request,
/// its route, the entity and the faults, so HTTP semantics are tested without sockets.
enum ResponsePlanner {
    static func plan(request: HTTPRequest, route: Route?, entity: Entity?, faults: [Fault]) -> ResponsePlan {
        var plan = shape(request: request, route: route, entity: entity, faults: faults)
        if request.method == "HEAD" { plan.sendsBody = false }
        if plan.status == 204 || plan.status == 304 {  // never a body (RFC 9110 §15.3.5, §15.4.5)
            plan.sendsBody = false
            plan.headers.removeAll { $0.name == "Content-Length" }
        }
        if request.wantsClose { plan.close = true }
        for fault in faults {
            switch fault {
            case .truncate(let count): plan.cutAfter = max(0, count); plan.close = true
            case .reset(let count): plan.cutAfter = max(0, count); plan.resetOnCut = true; plan.close = true
            case .noContentLength where plan.sendsBody:
                plan.headers.removeAll { $0.name == "Content-Length" }
                plan.close = true
            case .malformedResponse: plan.malformed = true; plan.close = true
            default: break
            }
        }
        if plan.close { plan.headers.append(("Connection", "close")) }
        return plan
    }

    private static func shape(request: HTTPRequest, route: Route?, entity: Entity?, faults: [Fault]) -> ResponsePlan {
        guard request.method == "GET" || request.method == "HEAD" else {
            var plan = text(405, "method not allowed\n")
            plan.headers.append(("Allow", "GET, HEAD"))
            return plan
        }
        for case .status(let code) in faults { return text(code, "injected status \(code)\n") }
        for case .busy(let seconds) in faults {
            var plan = text(503, "busy\n")
            plan.headers.append(("Retry-After", String(seconds)))
            return plan
        }
        switch route {
        case nil:
            return text(404, "not found\n")
        case .redirect(let location, let status):
            var plan = text(status, "redirect to \(location)\n")
            plan.headers.append(("Location", location))
            return plan
        case .resource:
            guard let entity else { return text(404, "not found (file missing)\n") }
            return answer(request: request, entity: entity, faults: faults)
        }
    }

    private static func answer(request: HTTPRequest, entity: Entity, faults: [Fault]) -> ResponsePlan {
        var validators: [(name: String, value: String)] = [
            ("ETag", entity.etag),
            ("Last-Modified", HTTPDate.format(Date(timeIntervalSince1970: TimeInterval(entity.lastModified)))),
        ]
        validators += entity.extraHeaders
        if isNotModified(request: request, entity: entity) {
            var plan = ResponsePlan(status: 304, headers: validators)
            plan.sendsBody = false
            return plan
        }
        var headers: [(name: String, value: String)] = [
            ("Content-Type", entity.contentType), ("Accept-Ranges", "bytes"),
        ] + validators
        let full = ResponsePlan(status: 200, headers: headers + [("Content-Length", "\(entity.length)")],
                                entityRange: 0..<entity.length)

        // Range applies to GET only (RFC 9110 §14.2); multiple ranges are answered 200.
        guard request.method == "GET", let rangeValue = request.header("range"),
              case .single(let spec) = RangeHeader.parse(rangeValue),
              ifRangeAllows(request: request, entity: entity)
        else { return full }

        guard var range = spec.resolve(length: entity.length), !faults.contains(.rangeNotSatisfiable) else {
            var plan = text(416, "range not satisfiable\n")
            plan.headers += [("Content-Range", "bytes */\(entity.length)"), ("Accept-Ranges", "bytes")]
            return plan
        }
        if faults.contains(.ignoreRange) { return full }

        var total = entity.length
        for fault in faults {
            switch fault {
            case .wrongOffset(let delta):
                let start = min(max(0, range.lowerBound + delta), entity.length - 1)
                range = start..<min(entity.length, start + Int64(range.count))
            case .shortRangeAtEnd(let missing):
                range = range.lowerBound..<max(range.lowerBound + 1, range.upperBound - max(0, missing))
            case .wrongTotal(let wrong):
                total = wrong
            case .gzipOnRange:
                headers.append(("Content-Encoding", "gzip"))
            default:
                break
            }
        }
        headers += [
            ("Content-Range", "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(total)"),
            ("Content-Length", "\(range.count)"),
        ]
        return ResponsePlan(status: 206, headers: headers, entityRange: range)
    }

    /// If-None-Match (weak comparison) wins over If-Modified-Since (RFC 9110 §13.2.2).
    private static func isNotModified(request: HTTPRequest, entity: Entity) -> Bool {
        if let condition = request.header("if-none-match") {
            if condition.trimmingSpaces() == "*" { return true }
            return entityTags(condition).contains { weakTag($0) == weakTag(entity.etag) }
        }
        if let condition = request.header("if-modified-since"), let since = HTTPDate.parse(condition) {
            return entity.lastModified <= since
        }
        return false
    }

    /// If-Range: a strong ETag must match exactly; a date must equal Last-Modified.
    private static func ifRangeAllows(request: HTTPRequest, entity: Entity) -> Bool {
        guard let condition = request.header("if-range")?.trimmingSpaces() else { return true }
        if condition.hasPrefix("\"") || condition.hasPrefix("W/") {
            return !condition.hasPrefix("W/") && !entity.etag.hasPrefix("W/") && condition == entity.etag
        }
        return HTTPDate.parse(condition) == entity.lastModified
    }

    private static func entityTags(_ list: String) -> [String] {
        list.split(separator: ",").map { String($0).trimmingSpaces() }.filter { !$0.isEmpty }
    }

    private static func weakTag(_ tag: String) -> String {
        tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag
    }

    private static func text(_ status: Int, _ body: String) -> ResponsePlan {
        let bytes = Array(body.utf8)
        return ResponsePlan(status: status, headers: [
            ("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", "\(bytes.count)"),
        ], textBody: bytes)
    }
}
