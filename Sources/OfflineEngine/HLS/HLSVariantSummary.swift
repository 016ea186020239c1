import Foundation
import OfflineStore

/// One variant of an HLS item as `offlinefs variants` and `user.offline.variants` show it.
public struct HLSVariantSummary: Sendable, Codable, Equatable {
    /// `<width>x<height>`, when the playlist says.
    public var resolution: String?
    /// Peak and average bits per second.
    public var bandwidth: Int
    public var averageBandwidth: Int?
    public var codecs: String?
    /// Bytes for the whole stream: (average) bandwidth × duration.
    public var estimatedSize: Int64?
    /// Audio languages `audio=` can ask for with it.
    public var audio: [String]
    /// The variant downloaded (or prepared to be).
    public var chosen: Bool

    /// The variants lowest bandwidth first, the chosen one marked.
    public static func list(_ variants: [HLSVariantRecord], chosen: HLSStreamRecord?) -> [HLSVariantSummary] {
        variants.sorted { $0.bandwidth < $1.bandwidth }.map { variant in
            HLSVariantSummary(resolution: variant.resolution, bandwidth: variant.bandwidth,
                              averageBandwidth: variant.averageBandwidth, codecs: variant.codecs,
                              estimatedSize: variant.estimatedSize, audio: variant.audioLanguages,
                              chosen: chosen?.isChosen(variant) ?? false)
        }
    }

    /// The list as one line of JSON (`user.offline.variants`, `variants --json`).
    public static func json(_ list: [HLSVariantSummary]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(list)).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
    }

    /// `1280x720  2500000 bit/s  ~562.5 MB  avc1.64001f,mp4a.40.2  audio en,fr  (chosen)`.
    public var line: String {
        var words = [resolution ?? "audio-only", "\(bandwidth) bit/s"]
        words.append(estimatedSize.map { "~" + ByteCountFormatter.string(fromByteCount: $0, countStyle: .decimal) } ?? "size unknown")
        if let codecs { words.append(codecs) }
        if !audio.isEmpty { words.append("audio " + audio.joined(separator: ",")) }
        if chosen { words.append("(chosen)") }
        return words.joined(separator: "  ")
    }
}

extension Library {
    /// An HLS item's variants, lowest bandwidth first, the chosen one marked: from the store,
    /// else fetched from its origin and not stored (`HLSStreams.variants`). Blocking (network)
    /// only when none is stored.
    public func hlsVariants(itemID: Int64) throws(HLSFailure) -> [HLSVariantSummary] {
        let variants = try HLSStreams(store: store, client: client).variants(itemID: itemID)
        return HLSVariantSummary.list(variants, chosen: (try? store.hlsStream(itemID: itemID)) ?? nil)
    }
}
