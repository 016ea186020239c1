/// One media segment of an HLS item's chosen variant.
public struct HLSSegment: Sendable, Codable, Hashable {
    public var itemID: Int64
    /// Media sequence number.
    public var sequence: Int64
    public var uri: String
    /// Seconds (`#EXTINF`).
    public var duration: Double
    /// `#EXT-X-BYTERANGE` offset and length, when the segment is a sub-range.
    public var byteRangeStart: Int64?
    public var byteRangeLength: Int64?
    /// Bytes, once known.
    public var size: Int64?
    /// Fully downloaded and flushed.
    public var present: Bool

    public init(itemID: Int64, sequence: Int64, uri: String, duration: Double, byteRangeStart: Int64? = nil,
                byteRangeLength: Int64? = nil, size: Int64? = nil, present: Bool = false) {
        self.itemID = itemID
        self.sequence = sequence
        self.uri = uri
        self.duration = duration
        self.byteRangeStart = byteRangeStart
        self.byteRangeLength = byteRangeLength
        self.size = size
        self.present = present
    }
}
