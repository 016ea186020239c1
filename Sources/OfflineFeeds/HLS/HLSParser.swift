import Foundation

/// Parses HLS playlists (RFC 8216): a pure function from bytes to a master or media playlist.
///
/// Strict where a mistake would reach the network or the disk (URIs, byte ranges, keys,
/// counts), lenient where players are (blank lines, comments, unknown tags, spaces after
/// commas in attribute lists).
public enum HLSParser {
    /// Parses a playlist.
    ///
    /// - Parameters:
    ///   - data: the playlist as fetched.
    ///   - url: where it was fetched from; every URI in it resolves against this.
    ///   - limits: size and count caps.
    /// - Throws: `HLSParseError` naming the problem and its line; no partial result.
    public static func parse(_ data: Data, url: URL, limits: HLSLimits = HLSLimits()) throws(HLSParseError) -> HLSPlaylist {
        guard data.count <= limits.maxBytes else {
            throw HLSParseError(.tooLarge, line: nil, "the playlist is \(data.count) bytes, more than the limit of \(limits.maxBytes)")
        }
        let lines = try HLSLines.split(data, limits: limits)
        guard let first = lines.first, first.text == "#EXTM3U" else {
            throw HLSParseError(.malformed, line: 1, "an HLS playlist starts with #EXTM3U")
        }

        var master = HLSMasterBuilder(base: url, limits: limits)
        var media = HLSMediaBuilder(base: url, limits: limits)
        var version: Int?
        // The first tag that decided the kind, for the error when the other kind shows up.
        var decided: (kind: Kind, tag: String, line: Int)?

        for line in lines.dropFirst() where !line.text.isEmpty {
            let number = line.number
            guard line.text.first == "#" else {
                switch decided?.kind {
                case .master: try master.uri(line.text, line: number)
                case .media: try media.uri(line.text, line: number)
                case nil: throw HLSParseError(.malformed, line: number, "a URI line before any EXTINF or EXT-X-STREAM-INF")
                }
                continue
            }
            guard line.text.hasPrefix("#EXT") else { continue }  // a comment
            let colon = line.text.firstIndex(of: ":")
            let name = String(line.text[line.text.index(after: line.text.startIndex)..<(colon ?? line.text.endIndex)])
            let value = colon.map { line.text[line.text.index(after: $0)...] } ?? ""

            if name == "EXT-X-VERSION" {
                guard let parsed = HLSNumbers.integer(value), parsed <= 1000 else {
                    throw HLSParseError(.malformed, line: number, "EXT-X-VERSION '\(HLSAttributeList.shown(value))' is not a whole number")
                }
                version = Int(parsed)
                continue
            }
            guard let kind = kind(of: name) else { continue }  // unknown or ignored tag
            if let decided, decided.kind != kind {
                throw HLSParseError(
                    .malformed, line: number,
                    "\(name) in a playlist that is a \(decided.kind) playlist (\(decided.tag) on line \(decided.line)); "
                        + "a playlist is either a master or a media playlist")
            }
            if decided == nil { decided = (kind, name, number) }
            switch kind {
            case .master: try master.tag(name, value, line: number)
            case .media: try media.tag(name, value, line: number)
            }
        }

        switch decided?.kind {
        case .master: return .master(try master.finish())
        case .media: return .media(try media.finish(version: version))
        case nil:
            throw HLSParseError(
                .malformed, line: nil, "the playlist has no EXT-X-STREAM-INF and no EXTINF or EXT-X-TARGETDURATION: it lists nothing")
        }
    }

    enum Kind: CustomStringConvertible {
        case master, media
        var description: String { self == .master ? "master" : "media" }
    }

    /// The playlist kind a tag belongs to; nil for tags either kind may hold and for tags the
    /// parser ignores.
    private static func kind(of tag: String) -> Kind? {
        switch tag {
        case "EXT-X-STREAM-INF", "EXT-X-MEDIA", "EXT-X-I-FRAME-STREAM-INF": .master
        case "EXTINF", "EXT-X-TARGETDURATION", "EXT-X-MEDIA-SEQUENCE", "EXT-X-PLAYLIST-TYPE", "EXT-X-ENDLIST",
            "EXT-X-BYTERANGE", "EXT-X-DISCONTINUITY", "EXT-X-KEY", "EXT-X-MAP":
            .media
        default: nil
        }
    }
}
