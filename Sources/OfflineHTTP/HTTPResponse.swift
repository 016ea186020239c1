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

    /// Adds one raw header line ("Name: value\r\n"); ignores lines without a colon.
    mutating func addLine(_ line: String) {
        guard let colon = line.firstIndex(of: ":") else { return }
        let name = line[..<colon].trimmingCharacters(in: .whitespaces)
        let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty else { return }
        self[name] = value
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
