import Foundation

/// Resolves the URIs of a playlist against its URL under the feeds' URL policy: only
/// `http`/`https` with a host (HARDENING 15, 16), so a playlist cannot point the engine at
/// `file:///etc/passwd` or a `data:` blob.
enum HLSURI {
    /// - Parameter what: names the URI in the error ("segment URI", "EXT-X-KEY URI").
    static func resolve(_ raw: some StringProtocol, against base: URL, line: Int, what: String) throws(HLSParseError) -> URL {
        // Checked before resolving: URL parsing would drop or percent-encode some of these.
        if raw.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw HLSParseError(.forbiddenURL, line: line, "\(what) '\(HLSAttributeList.shown(raw))' contains a control character")
        }
        switch FeedURL.resolve(String(raw), against: base) {
        case .allowed(let text):
            if let url = URL(string: text) { return url }
        case .forbiddenScheme(let scheme):
            throw HLSParseError(
                .forbiddenURL, line: line,
                "\(what) '\(HLSAttributeList.shown(raw))' has scheme \(HLSAttributeList.shown(scheme)); only http and https are allowed")
        case .invalid:
            break
        }
        throw HLSParseError(.forbiddenURL, line: line, "\(what) '\(HLSAttributeList.shown(raw))' is not a valid http or https URL")
    }
}
