import OfflineFeeds

/// `quality=low|medium|high|<bits-per-second>` of a download, and the variant it picks.
public enum HLSQuality: Sendable, Equatable {
    case low, medium, high
    case bitsPerSecond(Int)

    /// Parses the stored form (`low`, `medium`, `high` or a positive integer).
    public init?(_ text: String) {
        switch text.lowercased() {
        case "low": self = .low
        case "medium": self = .medium
        case "high": self = .high
        default:
            guard let bits = Int(text), bits > 0 else { return nil }
            self = .bitsPerSecond(bits)
        }
    }

    /// The variant to fetch.
    ///
    /// - `low`/`medium`/`high`: the lowest, middle and highest `BANDWIDTH`.
    /// - bits per second: the highest variant at or below it (the lowest when none is).
    /// - none asked (`quality` nil): the highest whose estimated size (`BANDWIDTH` ×
    ///   `duration`) fits `maxBytes` (file-size-max), else the lowest.
    static func choose(from variants: [HLSVariant], quality: HLSQuality?, duration: Double?,
                       maxBytes: Int64?) -> HLSVariant? {
        // Stable sort: variants of equal bandwidth keep the playlist's order (its preference).
        let ranked = variants.enumerated().sorted { ($0.element.bandwidth, $0.offset) < ($1.element.bandwidth, $1.offset) }
            .map(\.element)
        guard let lowest = ranked.first, let highest = ranked.last else { return nil }
        switch quality {
        case .low: return lowest
        case .medium: return ranked[(ranked.count - 1) / 2]
        case .high: return highest
        case .bitsPerSecond(let bits): return ranked.last { $0.bandwidth <= bits } ?? lowest
        case nil:
            guard let maxBytes, let duration else { return highest }
            return ranked.last { estimatedBytes(bandwidth: $0.bandwidth, duration: duration) <= maxBytes } ?? lowest
        }
    }

    /// Bytes a rendition of `bandwidth` bits per second takes for `duration` seconds.
    static func estimatedBytes(bandwidth: Int, duration: Double) -> Int64 {
        Int64((Double(bandwidth) / 8 * duration).rounded(.up))
    }
}
