import Foundation

/// A parsed HTTP/1.x request head. Parsing is a pure function of the bytes so hostile heads
/// are table-tested without a socket.
struct HTTPRequest: Sendable {
    var method: String
    /// The request target as sent (absolute-form reduced to path and query).
    var target: String
    /// `target` without the query.
    var path: String
    /// The query without `?`, if any.
    var query: String?
    /// `HTTP/1.1` or `HTTP/1.0`.
    var version: String
    /// Header names lowercased, values trimmed, in arrival order.
    var headers: [(name: String, value: String)]

    /// The value of `name` (lowercase); repeated headers are joined with ", " (RFC 9110 §5.3).
    func header(_ name: String) -> String? {
        let values = headers.filter { $0.name == name }.map(\.value)
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }

    /// Whether the client asked to close after this exchange: `Connection: close`, or
    /// HTTP/1.0 without `Connection: keep-alive`.
    var wantsClose: Bool {
        let tokens = (header("connection") ?? "").lowercased().split(separator: ",").map { String($0).trimmingSpaces() }
        if tokens.contains("close") { return true }
        return version == "HTTP/1.0" && !tokens.contains("keep-alive")
    }

    enum ParseError: Error, Equatable {
        case malformed(String)
        case unsupportedVersion
    }

    /// Parses the head (request line and header lines, without the final empty line).
    static func parse(head: [UInt8]) -> Result<HTTPRequest, ParseError> {
        // Split bytes, not Characters: "\r\n" is one Character in Swift. Decoding replaces
        // invalid UTF-8 (a target with it simply matches nothing).
        var lines = head.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line in
            String(decoding: line.last == UInt8(ascii: "\r") ? line.dropLast() : line, as: UTF8.self)
        }
        while let first = lines.first, first.isEmpty { lines.removeFirst() }  // RFC 9112 §2.2
        guard let requestLine = lines.first else { return .failure(.malformed("empty request")) }
        let parts = requestLine.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty else {
            return .failure(.malformed("bad request line"))
        }
        let method = String(parts[0])
        guard method.utf8.allSatisfy(isTokenByte) else { return .failure(.malformed("bad method")) }
        let version = String(parts[2])
        guard version.hasPrefix("HTTP/") else { return .failure(.malformed("bad version")) }
        guard version == "HTTP/1.1" || version == "HTTP/1.0" else { return .failure(.unsupportedVersion) }
        guard let target = originForm(String(parts[1])) else { return .failure(.malformed("bad target")) }

        var headers: [(name: String, value: String)] = []
        for line in lines.dropFirst() where !line.isEmpty {
            // Obsolete line folding and a missing colon are both rejected (RFC 9112 §5.2).
            guard let colon = line.firstIndex(of: ":"), let first = line.first, first != " ", first != "\t" else {
                return .failure(.malformed("bad header line"))
            }
            let name = String(line[..<colon])
            guard !name.isEmpty, name.utf8.allSatisfy(isTokenByte) else {
                return .failure(.malformed("bad header name"))
            }
            headers.append((name.lowercased(), String(line[line.index(after: colon)...]).trimmingSpaces()))
        }
        let query = target.firstIndex(of: "?").map { String(target[target.index(after: $0)...]) }
        let path = target.firstIndex(of: "?").map { String(target[..<$0]) } ?? target
        return .success(HTTPRequest(method: method, target: target, path: path, query: query,
                                    version: version, headers: headers))
    }

    /// Reduces absolute-form (`http://host/p?q`) to origin-form (`/p?q`); rejects anything
    /// not starting with `/` and any control byte.
    private static func originForm(_ raw: String) -> String? {
        guard raw.utf8.allSatisfy({ $0 > 0x20 && $0 != 0x7F }) else { return nil }
        var target = raw
        if let schemeEnd = raw.range(of: "://"), raw.lowercased().hasPrefix("http") {
            let rest = raw[schemeEnd.upperBound...]
            if let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) {
                target = String(rest[slash...])
                if target.hasPrefix("?") { target = "/" + target }
            } else {
                target = "/"
            }
        }
        guard target.hasPrefix("/") else { return nil }
        if let hash = target.firstIndex(of: "#") { target = String(target[..<hash]) }
        return target
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}
