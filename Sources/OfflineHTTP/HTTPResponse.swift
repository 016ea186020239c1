import Foundation

/// Response headers, names compared case-insensitively; a repeated header keeps its last value.
public struct HTTPHeaders: Sendable, Equatable {
    private var values: [String: String] = [:]

    public init() {}

    public init(_ pairs: [(String, String)]) {
        for (name, value) in pairs { self[name] = value }
    }

    public subscript(name: String) -> String? {
        get { values[name.lowercased()] }
        set { values[name.lowercased()] = newValue }
    }

    /// The lines of what libcurl's header callback was given: one line, except that libcurl
    /// 7.88 hands over every line it held while the transfer was paused in one call (a
    /// download held back for a reader from its first byte), and read as one line its
    /// `Content-Range` was lost.
    static func lines(in bytes: UnsafeRawBufferPointer) -> [String] {
        var lines: [String] = []
        var start = bytes.startIndex
        while start < bytes.endIndex {
            let end = bytes[start...].firstIndex(of: 0x0A).map { $0 + 1 } ?? bytes.endIndex
            lines.append(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self))
            start = end
        }
        return lines
    }

    /// Adds one raw header line ("Name: value\r\n"); ignores lines without a colon.
    mutating func addLine(_ line: String) {
        // Byte-wise: Foundation's trimmingCharacters(in:) was a visible share of the transfer
        // thread's time per range request (HTTP header whitespace is ASCII: OWS and CRLF).
        let bytes = Array(line.utf8)
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return }
        let name = Self.trimmed(bytes[..<colon])
        guard !name.isEmpty else { return }
        self[String(decoding: name, as: UTF8.self)] = String(decoding: Self.trimmed(bytes[(colon + 1)...]), as: UTF8.self)
    }

    private static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) }) else {
            return []
        }
        return bytes[first...last]
    }
}

/// A finished HTTP exchange.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: Data
    /// The URL after redirects.
    public var effectiveURL: String

    public init(status: Int, headers: HTTPHeaders, body: Data, effectiveURL: String) {
        self.status = status
        self.headers = headers
        self.body = body
        self.effectiveURL = effectiveURL
    }

    public var etag: String? { headers["etag"] }
    public var lastModified: String? { headers["last-modified"] }
    public var contentType: String? { headers["content-type"] }

    /// `Content-Length` as a number, when present and valid.
    public var contentLength: Int64? {
        headers["content-length"].flatMap { Int64($0) }.flatMap { $0 >= 0 ? $0 : nil }
    }

    public var isSuccess: Bool { (200..<300).contains(status) }
}
