import Foundation

/// `EXT-X-KEY` with a method other than `NONE`: how the segments after it are encrypted.
public struct HLSKey: Sendable, Equatable, Hashable {
    public enum Method: String, Sendable, Hashable {
        /// Whole segments, AES-128-CBC with PKCS7 padding.
        case aes128 = "AES-128"
        /// Individual samples (ES/fMP4); `keyFormat` tells which key system.
        case sampleAES = "SAMPLE-AES"
    }

    public var method: Method
    /// Absolute; where the key is fetched from.
    public var url: URL
    /// The explicit `IV` (16 bytes), nil when the playlist gives none.
    public var iv: [UInt8]?
    /// `KEYFORMAT`, nil when absent (which means `"identity"`).
    public var keyFormat: String?

    public init(method: Method, url: URL, iv: [UInt8]? = nil, keyFormat: String? = nil) {
        precondition(iv == nil || iv?.count == 16, "an HLS IV is 16 bytes")
        self.method = method
        self.url = url
        self.iv = iv
        self.keyFormat = keyFormat
    }

    /// The IV to decrypt segment `sequence` with: the explicit IV, else the sequence number
    /// as a 128-bit big-endian integer (RFC 8216 5.2).
    public func iv(forSequence sequence: Int64) -> [UInt8] {
        if let iv { return iv }
        // Sequence numbers are never negative (the parser refuses them); the upper 8 bytes stay 0.
        let value = UInt64(bitPattern: sequence)
        return [UInt8](repeating: 0, count: 8) + (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
    }
}
