import Foundation
import Glibc

/// Serves one accepted connection on its own thread: reads requests, answers them (keep-alive)
/// and injects the faults registered for their paths. Never traps on client input: a bad
/// request gets a 400-class answer and the connection closes.
struct OriginConnection {
    /// How the connection ends.
    enum Ending { case close, reset }

    let fd: Int32
    let id: Int
    let registry: OriginRegistry
    let gate: StallGate

    /// Request bodies are read and dropped; more than this is refused (the origin serves
    /// GET/HEAD only).
    static let maxRequestBody = 1 << 20
    /// Bodies up to this size go out in the same send as the headers.
    static let coalesceLimit: Int64 = 64 * 1024
    static let chunkSize = 1 << 20

    func run() -> Ending {
        var reader = RequestReader(fd: fd)
        while true {
            let head: [UInt8]
            switch reader.readHead() {
            case .closed: return .close
            case .tooLarge: return refuse(431, "request header fields too large")
            case .head(let bytes): head = bytes
            }
            let time = Date()
            let request: HTTPRequest
            switch HTTPRequest.parse(head: head) {
            case .success(let parsed): request = parsed
            case .failure(.unsupportedVersion): return refuse(505, "HTTP version not supported")
            case .failure(.malformed(let why)): return refuse(400, why)
            }
            if request.header("transfer-encoding") != nil {
                return refuse(501, "request bodies with Transfer-Encoding are not supported")
            }
            if let value = request.header("content-length") {
                guard let length = Int(value), length >= 0 else { return refuse(400, "bad Content-Length") }
                guard length <= Self.maxRequestBody else { return refuse(413, "request body too large") }
                guard reader.discardBody(count: length) else { return .close }
            }
            if let ending = respond(to: request, time: time) { return ending }
        }
    }

    /// Answers one request; returns how the connection ends, or `nil` to keep it alive.
    private func respond(to request: HTTPRequest, time: Date) -> Ending? {
        registry.answering(path: request.path)
        defer { registry.answered(path: request.path) }
        let faults = registry.takeFaults(for: request)
        let match = registry.route(for: request)
        if faults.contains(.closeWithoutResponse) {
            registry.record(request, connection: id, status: 0, faults: faults, time: time)
            return .close
        }

        var reader: BodyReader?
        var entity: Entity?
        if case .resource(let resource)? = match?.route, let opened = BodyReader.open(resource.body) {
            reader = opened.reader
            var etag = resource.effectiveETag(size: opened.length, fileModified: opened.modified)
            if faults.contains(.changeETagEachRequest), let key = match?.key {
                etag = Self.revised(etag, revision: registry.nextETagRevision(key))
            }
            entity = Entity(length: opened.length, etag: etag,
                            lastModified: Int64(resource.effectiveLastModified.timeIntervalSince1970.rounded(.down)),
                            contentType: resource.contentType, extraHeaders: resource.extraHeaders)
        }
        defer { reader?.close() }

        let plan = ResponsePlanner.plan(request: request, route: match?.route, entity: entity, faults: faults)
        registry.record(request, connection: id, status: plan.status, faults: faults, time: time)

        for fault in faults {
            switch fault {
            case .latency(let milliseconds):
                guard gate.wait(seconds: Double(milliseconds) / 1000, releasable: false) else { return .close }
            case .stallBeforeHeaders(let seconds):
                guard gate.wait(seconds: seconds, releasable: true) else { return .close }
            default: break
            }
        }
        if plan.malformed {
            _ = Socket.sendAll(fd, Array("HTTP/1.1 two hundred OK\r\nContent-Length: nonsense\r\n\r\n".utf8))
            return .close
        }

        var trickle: Int?
        var stall: Double?
        for fault in faults {
            if case .trickle(let rate) = fault { trickle = max(1, rate) }
            if case .stall(let seconds) = fault { stall = seconds }
        }
        let bodyLength = plan.sendsBody ? plan.bodyLength : 0
        let limit = min(bodyLength, plan.cutAfter ?? bodyLength)
        var head = Self.head(plan)
        var sent: Int64 = 0
        if limit > 0, limit <= Self.coalesceLimit, trickle == nil, stall == nil {
            // Small bodies share the headers' send: one packet, no extra round of syscalls.
            let start = head.count
            head.append(contentsOf: repeatElement(0, count: Int(limit)))
            let filled = head.withUnsafeMutableBytes { buffer in
                fillBody(plan, reader, at: 0, into: UnsafeMutableRawBufferPointer(rebasing: buffer[start...]))
            }
            guard filled else { return .reset }
            sent = limit
            registry.addBodyBytes(limit, path: request.path)
        }
        guard Socket.sendAll(fd, head) else {
            registry.addBodyBytes(-sent, path: request.path)
            return .close
        }
        if let stall, !gate.wait(seconds: stall, releasable: true) { return .close }
        if sent < limit {
            guard sendBody(plan, reader, from: sent, upTo: limit, trickle: trickle, path: request.path) else {
                return .close
            }
        }
        if plan.cutAfter != nil, limit < bodyLength { return plan.resetOnCut ? .reset : .close }
        return plan.close ? (plan.resetOnCut ? .reset : .close) : nil
    }

    /// Streams body bytes `[from, upTo)` in large chunks, or paced chunks when trickling.
    private func sendBody(_ plan: ResponsePlan, _ reader: BodyReader?, from: Int64, upTo limit: Int64,
                          trickle: Int?, path: String) -> Bool {
        let chunk = trickle.map { max(1, $0 / 10) } ?? Self.chunkSize
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: min(chunk, Int(limit - from)), alignment: 8)
        defer { buffer.deallocate() }
        var offset = from
        while offset < limit {
            let count = min(buffer.count, Int(limit - offset))
            let part = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count])
            guard fillBody(plan, reader, at: offset, into: part) else { return false }
            registry.addBodyBytes(Int64(count), path: path)
            guard Socket.sendAll(fd, UnsafeRawBufferPointer(part)) else {
                registry.addBodyBytes(-Int64(count), path: path)
                return false
            }
            offset += Int64(count)
            if let trickle, offset < limit,
               !gate.wait(seconds: Double(count) / Double(trickle), releasable: false) { return false }
        }
        return true
    }

    /// Body byte `offset` of the answer: from the entity range, or the text body.
    private func fillBody(_ plan: ResponsePlan, _ reader: BodyReader?, at offset: Int64,
                          into buffer: UnsafeMutableRawBufferPointer) -> Bool {
        if let range = plan.entityRange {
            return reader?.fill(from: range.lowerBound + offset, into: buffer) ?? false
        }
        plan.textBody.withUnsafeBytes { text in
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: text[Int(offset)..<Int(offset) + buffer.count]))
        }
        return true
    }

    /// Answers a request that could not be parsed or is refused, then closes.
    private func refuse(_ status: Int, _ reason: String) -> Ending {
        let body = Array("\(reason)\n".utf8)
        let plan = ResponsePlan(status: status, headers: [
            ("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", "\(body.count)"),
            ("Connection", "close"),
        ], textBody: body)
        _ = Socket.sendAll(fd, Self.head(plan) + body)
        Socket.lingeringClose(fd)
        return .close
    }

    private static func head(_ plan: ResponsePlan) -> [UInt8] {
        var text = "HTTP/1.1 \(plan.status) \(reasonPhrase(plan.status))\r\n"
        text += "Date: \(HTTPDate.format(Date()))\r\nServer: offlinefs-test-origin\r\n"
        for (name, value) in plan.headers { text += "\(name): \(value)\r\n" }
        text += "\r\n"
        return Array(text.utf8)
    }

    /// `"tag"` → `"tag-r3"` (keeps a `W/` prefix and the quotes).
    static func revised(_ etag: String, revision: Int) -> String {
        guard etag.hasSuffix("\""), etag.count >= 2 else { return "\"\(etag)-r\(revision)\"" }
        return String(etag.dropLast()) + "-r\(revision)\""
    }

    static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 206: "Partial Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 413: "Content Too Large"
        case 416: "Range Not Satisfiable"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 505: "HTTP Version Not Supported"
        default: "Status"
        }
    }
}
