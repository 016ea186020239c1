/// The version of an origin file that an item file's cached bytes were fetched from: its
/// validators and total size. Bytes with another validator are never mixed with these.
public struct CacheValidator: Sendable, Hashable, Codable {
    /// The response's `ETag` as sent (quotes included; may be weak, `W/"…"`).
    public var etag: String?
    /// The response's `Last-Modified`, as sent.
    public var lastModified: String?
    /// The file's total size, when the origin said.
    public var totalSize: Int64?

    public init(etag: String? = nil, lastModified: String? = nil, totalSize: Int64? = nil) {
        self.etag = etag
        self.lastModified = lastModified
        self.totalSize = totalSize
    }
}
