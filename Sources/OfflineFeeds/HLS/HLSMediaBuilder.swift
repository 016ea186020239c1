import Foundation

/// The state of `HLSParser` while it reads a media playlist: the tags that apply to the next
/// segment (EXTINF, EXT-X-BYTERANGE, EXT-X-DISCONTINUITY) and those in force until changed
/// (EXT-X-KEY, EXT-X-MAP).
struct HLSMediaBuilder {
    let base: URL
    let limits: HLSLimits
    /// A day: longer is a typo or an attack on the engine's arithmetic, not a segment.
    static let maxDuration = 86_400.0

    private var targetDuration: Double?
    private var mediaSequence: Int64 = 0
    private var playlistType: String?
    private var hasEndList = false
    private var segments: [HLSMediaSegment] = []
    private var startTime = 0.0

    private var duration: (seconds: Double, line: Int)?
    private var byteRange: (length: Int64, offset: Int64?, line: Int)?
    private var discontinuity = false
    private var key: HLSKey?
    private var map: HLSMap?

    init(base: URL, limits: HLSLimits) {
        self.base = base
        self.limits = limits
    }

    mutating func tag(_ name: String, _ value: Substring, line: Int) throws(HLSParseError) {
        switch name {
        case "EXTINF":
            if let duration {
                throw HLSParseError(.malformed, line: line, "EXTINF, but the EXTINF on line \(duration.line) has no URI line yet")
            }
            // `<duration>,[<title>]`; the title is not kept.
            let text = value.split(separator: ",", maxSplits: 1, omittingEmptySubsequences: false)[0]
            duration = (try seconds(text, what: "EXTINF duration", line: line), line)
        case "EXT-X-TARGETDURATION":
            targetDuration = try seconds(value, what: "EXT-X-TARGETDURATION", line: line)
        case "EXT-X-MEDIA-SEQUENCE":
            // Sequence numbers are counted from it, so it must come before the first segment.
            guard segments.isEmpty else {
                throw HLSParseError(.malformed, line: line, "EXT-X-MEDIA-SEQUENCE after the first segment")
            }
            guard let sequence = HLSNumbers.integer(value) else {
                throw HLSParseError(.malformed, line: line, "EXT-X-MEDIA-SEQUENCE '\(HLSAttributeList.shown(value))' is not a whole number")
            }
            mediaSequence = sequence
        case "EXT-X-PLAYLIST-TYPE":
            guard value == "VOD" || value == "EVENT" else {
                throw HLSParseError(.malformed, line: line, "EXT-X-PLAYLIST-TYPE '\(HLSAttributeList.shown(value))' is not VOD or EVENT")
            }
            playlistType = String(value)
        case "EXT-X-ENDLIST":
            hasEndList = true
        case "EXT-X-DISCONTINUITY":
            discontinuity = true
        case "EXT-X-BYTERANGE":
            guard let range = HLSNumbers.byteRange(value) else {
                throw HLSParseError(.malformed, line: line, "EXT-X-BYTERANGE '\(HLSAttributeList.shown(value))' is not <length>[@<offset>]")
            }
            byteRange = (range.length, range.offset, line)
        case "EXT-X-KEY":
            key = try Self.key(HLSAttributeList(value, tag: name, line: line), base: base)
        case "EXT-X-MAP":
            map = try Self.map(HLSAttributeList(value, tag: name, line: line), base: base)
        default:
            break
        }
    }

    mutating func uri(_ text: Substring, line: Int) throws(HLSParseError) {
        guard let duration else {
            throw HLSParseError(.malformed, line: line, "a segment URI line without an EXTINF before it")
        }
        guard segments.count < limits.maxSegments else {
            throw HLSParseError(.tooLarge, line: line, "more than \(limits.maxSegments) segments, the limit")
        }
        let (sequence, overflow) = mediaSequence.addingReportingOverflow(Int64(segments.count))
        guard !overflow else {
            throw HLSParseError(.malformed, line: line, "the segment's sequence number is past 2^63 (EXT-X-MEDIA-SEQUENCE is too large)")
        }
        let url = try HLSURI.resolve(text, against: base, line: line, what: "segment URI")
        segments.append(
            HLSMediaSegment(
                sequence: sequence, url: url, duration: duration.seconds, byteRange: try resolvedByteRange(for: url),
                discontinuity: discontinuity, key: key, map: map, startTime: startTime))
        startTime += duration.seconds
        self.duration = nil
        byteRange = nil
        discontinuity = false
    }

    func finish(version: Int?) throws(HLSParseError) -> HLSMediaPlaylist {
        if let duration {
            throw HLSParseError(.malformed, line: duration.line, "EXTINF is not followed by a segment URI line")
        }
        guard let targetDuration else {
            throw HLSParseError(.malformed, line: nil, "the media playlist has no EXT-X-TARGETDURATION")
        }
        return HLSMediaPlaylist(
            version: version, targetDuration: targetDuration, mediaSequence: mediaSequence, playlistType: playlistType,
            hasEndList: hasEndList, segments: segments)
    }

    /// The pending EXT-X-BYTERANGE with its offset made absolute: an omitted offset continues
    /// right after the previous segment, which must be a sub-range of the same resource.
    private func resolvedByteRange(for url: URL) throws(HLSParseError) -> HLSByteRange? {
        guard let byteRange else { return nil }
        let offset: Int64
        if let given = byteRange.offset {
            offset = given
        } else if let previous = segments.last, previous.url == url, let range = previous.byteRange {
            offset = range.offset + range.length  // checked for overflow when that range was made
        } else {
            throw HLSParseError(
                .malformed, line: byteRange.line,
                "EXT-X-BYTERANGE has no offset and the previous segment is not a byte range of the same URI")
        }
        guard !offset.addingReportingOverflow(byteRange.length).overflow else {
            throw HLSParseError(.malformed, line: byteRange.line, "EXT-X-BYTERANGE ends past 2^63 bytes")
        }
        return HLSByteRange(offset: offset, length: byteRange.length)
    }

    private func seconds(_ text: Substring, what: String, line: Int) throws(HLSParseError) -> Double {
        let shown = HLSAttributeList.shown(text)
        guard let value = HLSNumbers.decimal(text) else {
            throw HLSParseError(.malformed, line: line, "\(what) '\(shown)' is not a number")
        }
        guard value >= 0 else { throw HLSParseError(.malformed, line: line, "\(what) \(shown) is negative") }
        guard value <= Self.maxDuration else {
            throw HLSParseError(.malformed, line: line, "\(what) \(shown) is longer than a day (86400 seconds)")
        }
        return value
    }

    /// EXT-X-KEY: the key now in force, nil for METHOD=NONE.
    ///
    /// A later EXT-X-KEY replaces the earlier one. (Playlists that list one key per
    /// KEYFORMAT for several DRM systems keep the last; they are not AES-128 anyway.)
    private static func key(_ attributes: HLSAttributeList, base: URL) throws(HLSParseError) -> HLSKey? {
        let name = try attributes.requiredString("METHOD")
        if name == "NONE" { return nil }
        guard let method = HLSKey.Method(rawValue: name) else {
            throw HLSParseError(.unsupported, line: attributes.line, "EXT-X-KEY METHOD '\(HLSAttributeList.shown(name))' is not supported")
        }
        guard let raw = attributes.string("URI") else {
            throw HLSParseError(.malformed, line: attributes.line, "EXT-X-KEY METHOD=\(name) has no URI")
        }
        let url = try HLSURI.resolve(raw, against: base, line: attributes.line, what: "EXT-X-KEY URI")
        return HLSKey(method: method, url: url, iv: try attributes.iv("IV"), keyFormat: attributes.string("KEYFORMAT"))
    }

    private static func map(_ attributes: HLSAttributeList, base: URL) throws(HLSParseError) -> HLSMap {
        let url = try HLSURI.resolve(try attributes.requiredString("URI"), against: base, line: attributes.line, what: "EXT-X-MAP URI")
        guard let text = attributes.string("BYTERANGE") else { return HLSMap(url: url) }
        guard let range = HLSNumbers.byteRange(text),
            !(range.offset ?? 0).addingReportingOverflow(range.length).overflow
        else {
            throw HLSParseError(.malformed, line: attributes.line, "EXT-X-MAP BYTERANGE '\(HLSAttributeList.shown(text))' is not <length>[@<offset>]")
        }
        // No previous segment to continue from: an init section without an offset starts the file.
        return HLSMap(url: url, byteRange: HLSByteRange(offset: range.offset ?? 0, length: range.length))
    }
}
