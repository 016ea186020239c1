import Foundation

/// Resolves URLs found in feeds and applies the URL policy: only absolute `http`/`https`
/// URLs with a host leave the parser (HARDENING test 16).
enum FeedURL {
    enum Resolution: Equatable {
        case allowed(String)
        /// Resolved, but the scheme is not http/https (`file`, `ftp`, `javascript` …).
        case forbiddenScheme(String)
        case invalid
    }

    static func resolve(_ raw: String, against base: URL) -> Resolution {
        var cut = false
        guard let text = FeedText.clean(raw, limit: 16_384, cut: &cut), !cut else { return .invalid }
        guard let url = URL(string: text, relativeTo: base) ?? escaped(text).flatMap({ URL(string: $0, relativeTo: base) })
        else { return .invalid }
        let absolute = url.absoluteURL
        guard let scheme = absolute.scheme?.lowercased() else { return .invalid }
        guard scheme == "http" || scheme == "https" else { return .forbiddenScheme(scheme) }
        guard let host = absolute.host, !host.isEmpty else { return .invalid }
        // Scheme and host are case-insensitive; lowercase them so equal URLs compare equal.
        if absolute.scheme != scheme || host.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }),
            var components = URLComponents(url: absolute, resolvingAgainstBaseURL: false)
        {
            components.scheme = scheme
            components.host = components.host?.lowercased()
            if let normalized = components.string { return .allowed(normalized) }
        }
        return .allowed(absolute.absoluteString)
    }

    /// The URL if allowed, else nil with a warning naming `what`.
    static func allowed(_ raw: String?, against base: URL, what: String, warnings: inout FeedWarnings) -> String? {
        guard let raw else { return nil }
        switch resolve(raw, against: base) {
        case .allowed(let url):
            return url
        case .forbiddenScheme(let scheme):
            warnings.add("\(what) dropped: URL scheme \(scheme) is not allowed")
        case .invalid:
            warnings.add("\(what) dropped: \(FeedWarnings.quote(raw)) is not a valid URL")
        }
        return nil
    }

    /// Real feeds contain spaces and other characters URLs do not allow; escape them
    /// (and nothing that is already an escape or a delimiter) and try once more.
    private static func escaped(_ text: String) -> String? {
        var allowed = CharacterSet.urlQueryAllowed
        allowed.insert(charactersIn: "#%")
        return text.addingPercentEncoding(withAllowedCharacters: allowed)
    }
}
