import Foundation

extension HLSMediaPlaylist {
    /// The playlist as text with every URI replaced: segments, maps and keys get the URI
    /// `localURI` returns.
    ///
    /// This is the mount's local `.m3u8`, so it describes files that already hold exactly
    /// one resource each: byte ranges are dropped (each local file is the slice itself), and
    /// keys are written with an explicit IV so renumbering segments cannot change decryption.
    /// It is always VOD with EXT-X-ENDLIST; EXT-X-MAP and EXT-X-KEY are written only when they
    /// change (METHOD=NONE when a key stops).
    ///
    /// - Parameter localURI: the URI for a resource; it must not contain `"`, CR or LF, and a
    ///   segment's must not start with `#` (a precondition: the engine makes these names).
    public func rendered(localURI: (HLSResource) -> String) -> String {
        let hasMap = segments.contains { $0.map != nil }
        let hasKeyFormat = segments.contains { $0.key?.keyFormat != nil }
        // EXT-X-MAP needs version 6 (7 for a map without I-frames-only); KEYFORMAT needs 5.
        let version = hasMap ? 7 : hasKeyFormat ? 5 : 3
        // EXTINF rounded to the nearest second must not exceed the (integer) target duration.
        let longest = segments.map { $0.duration.rounded() }.max() ?? 0
        let target = Int(max(targetDuration.rounded(.up), longest))

        var lines = [
            "#EXTM3U", "#EXT-X-VERSION:\(version)", "#EXT-X-TARGETDURATION:\(target)",
            "#EXT-X-MEDIA-SEQUENCE:\(mediaSequence)", "#EXT-X-PLAYLIST-TYPE:VOD",
        ]
        var map: HLSMap?
        var keyTag: String?  // the EXT-X-KEY in force, as written; nil when none is
        for segment in segments {
            if segment.discontinuity { lines.append("#EXT-X-DISCONTINUITY") }
            // A map cannot be switched off in HLS; segments after one keep it, as the origin's did.
            if let segmentMap = segment.map, segmentMap != map {
                lines.append("#EXT-X-MAP:URI=\(Self.quoted(localURI(.map(segmentMap))))")
                map = segmentMap
            }
            let tag = segment.key.map { Self.keyTag($0, sequence: segment.sequence, uri: localURI(.key($0))) }
            if tag != keyTag {
                lines.append(tag ?? "#EXT-X-KEY:METHOD=NONE")
                keyTag = tag
            }
            lines.append("#EXTINF:\(Self.decimal(segment.duration)),")
            let uri = localURI(.segment(segment))
            precondition(!uri.hasPrefix("#") && !uri.isEmpty && Self.isSafe(uri), "local segment URI '\(uri)' cannot be a URI line")
            lines.append(uri)
        }
        lines.append("#EXT-X-ENDLIST")
        return lines.joined(separator: "\n") + "\n"
    }

    private static func keyTag(_ key: HLSKey, sequence: Int64, uri: String) -> String {
        let iv = key.iv(forSequence: sequence).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
        var tag = "#EXT-X-KEY:METHOD=\(key.method.rawValue),URI=\(quoted(uri)),IV=0x\(iv)"
        if let format = key.keyFormat { tag += ",KEYFORMAT=\(quoted(format))" }
        return tag
    }

    private static func quoted(_ text: String) -> String {
        precondition(isSafe(text), "'\(text)' cannot be a quoted-string in a playlist")
        return "\"\(text)\""
    }

    private static func isSafe(_ text: String) -> Bool {
        !text.utf8.contains { $0 == UInt8(ascii: "\"") || $0 == 0x0A || $0 == 0x0D }
    }

    /// Shortest text that parses back to the same Double, without the exponent form
    /// (`1e-05`) the RFC's decimal-floating-point does not allow.
    private static func decimal(_ value: Double) -> String {
        let text = "\(value)"
        guard text.contains("e") else { return text }
        var fixed = String(format: "%.20f", value)
        while fixed.hasSuffix("0") { fixed.removeLast() }
        return fixed.hasSuffix(".") ? fixed + "0" : fixed
    }
}
