import Foundation

/// The state of `HLSParser` while it reads a master playlist.
struct HLSMasterBuilder {
    let base: URL
    let limits: HLSLimits
    private var variants: [HLSVariant] = []
    private var renditions: [HLSRendition] = []
    /// The last EXT-X-STREAM-INF, waiting for its URI line (its `url` is the playlist's own
    /// until then).
    private var pending: (variant: HLSVariant, line: Int)?

    init(base: URL, limits: HLSLimits) {
        self.base = base
        self.limits = limits
    }

    mutating func tag(_ name: String, _ value: Substring, line: Int) throws(HLSParseError) {
        switch name {
        case "EXT-X-STREAM-INF": try streamInf(HLSAttributeList(value, tag: name, line: line))
        case "EXT-X-MEDIA": try media(HLSAttributeList(value, tag: name, line: line))
        default: break  // EXT-X-I-FRAME-STREAM-INF: trick-play streams are not downloaded
        }
    }

    mutating func uri(_ text: Substring, line: Int) throws(HLSParseError) {
        guard var variant = pending?.variant else {
            throw HLSParseError(.malformed, line: line, "a URI line without an EXT-X-STREAM-INF before it")
        }
        variant.url = try HLSURI.resolve(text, against: base, line: line, what: "variant URI")
        variants.append(variant)
        pending = nil
    }

    func finish() throws(HLSParseError) -> HLSMasterPlaylist {
        try checkNothingPending()
        guard !variants.isEmpty else {
            throw HLSParseError(.malformed, line: nil, "the master playlist has no EXT-X-STREAM-INF variant")
        }
        return HLSMasterPlaylist(variants: variants, renditions: renditions)
    }

    private mutating func streamInf(_ attributes: HLSAttributeList) throws(HLSParseError) {
        try checkNothingPending()
        // Counted before the URI is read so a flood of tags stops at the limit.
        guard variants.count < limits.maxVariants else {
            throw HLSParseError(.tooLarge, line: attributes.line, "more than \(limits.maxVariants) variants (EXT-X-STREAM-INF), the limit")
        }
        guard let bandwidth = try attributes.integer("BANDWIDTH") else {
            throw HLSParseError(.malformed, line: attributes.line, "EXT-X-STREAM-INF has no BANDWIDTH attribute")
        }
        let average = try attributes.integer("AVERAGE-BANDWIDTH")
        let variant = HLSVariant(
            url: base, bandwidth: Int(bandwidth), averageBandwidth: average.map { Int($0) },
            resolution: try attributes.resolution("RESOLUTION"), codecs: attributes.string("CODECS"),
            frameRate: try attributes.decimal("FRAME-RATE"), audioGroup: attributes.string("AUDIO"),
            subtitlesGroup: attributes.string("SUBTITLES"))
        pending = (variant, attributes.line)
    }

    private mutating func media(_ attributes: HLSAttributeList) throws(HLSParseError) {
        guard renditions.count < limits.maxRenditions else {
            throw HLSParseError(.tooLarge, line: attributes.line, "more than \(limits.maxRenditions) renditions (EXT-X-MEDIA), the limit")
        }
        let type = try attributes.requiredString("TYPE")
        guard let kind = HLSRendition.Kind(rawValue: type) else {
            throw HLSParseError(
                .malformed, line: attributes.line, "EXT-X-MEDIA TYPE '\(HLSAttributeList.shown(type))' is not AUDIO, VIDEO, SUBTITLES or CLOSED-CAPTIONS")
        }
        let isDefault = try attributes.flag("DEFAULT")
        var url: URL?
        // Captions live inside the video stream; the RFC forbids a URI on them, so ignore one.
        if kind != .closedCaptions, let raw = attributes.string("URI") {
            url = try HLSURI.resolve(raw, against: base, line: attributes.line, what: "EXT-X-MEDIA URI")
        }
        renditions.append(
            HLSRendition(
                kind: kind, groupID: try attributes.requiredString("GROUP-ID"), name: try attributes.requiredString("NAME"),
                language: attributes.string("LANGUAGE"), isDefault: isDefault,
                // DEFAULT=YES implies AUTOSELECT=YES (RFC 8216 4.3.4.1).
                autoselect: try attributes.flag("AUTOSELECT", default: isDefault), url: url))
    }

    private func checkNothingPending() throws(HLSParseError) {
        if let pending {
            throw HLSParseError(.malformed, line: pending.line, "EXT-X-STREAM-INF is not followed by a URI line")
        }
    }
}
