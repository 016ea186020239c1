import Foundation

/// Entry points of the feed parsers: pure functions from bytes to a `ParsedFeed`.
///
/// The caller fetches the bytes (with its own size cap) and runs the parse off the FUSE
/// threads and off Swift's cooperative pool (DESIGN §5): a 256 MB document is CPU work.
public enum FeedParser {
    /// Guesses the format from the first bytes: `{` is a JSON catalog; for XML, the root
    /// element decides (`rss` or `rdf:RDF` → RSS, `feed` → Atom). Returns nil for anything
    /// else, an HTML page included.
    public static func detectKind(_ data: Data) -> FeedKind? {
        data.prefix(65_536).withUnsafeBytes { raw in FeedSniffer.kind(raw.bindMemory(to: UInt8.self)) }
    }

    /// Parses a catalog page.
    ///
    /// - Parameters:
    ///   - data: the document as fetched.
    ///   - kind: the format, if known; nil detects it with `detectKind(_:)`.
    ///   - baseURL: the URL the document was fetched from; relative URLs resolve against it.
    ///   - limits: size, count, depth and time caps.
    /// - Throws: `FeedError` with a message for the user; no partial result.
    public static func parse(
        _ data: Data, kind: FeedKind? = nil, baseURL: URL, limits: FeedLimits = FeedLimits()
    ) throws(FeedError) -> ParsedFeed {
        let deadline = ContinuousClock.now.advanced(by: limits.deadline)
        try checkSize(data, limits: limits)
        guard let kind = kind ?? detectKind(data) else {
            // An XML document with a hostile DTD gets the DTD error, not "unknown format".
            if data.first(where: { !FeedText.isSpace($0) }) == UInt8(ascii: "<") {
                _ = try XMLSanitizer.sanitize(data, deadline: deadline)
            }
            throw unknownFormat(data)
        }
        switch kind {
        case .json:
            return try JSONCatalogParser.parse(data, baseURL: baseURL, limits: limits, deadline: deadline)
        case .rss, .atom:
            let clean = try XMLSanitizer.sanitize(data, deadline: deadline)
            var feed =
                kind == .rss
                ? try RSSParser.parse(clean.data, baseURL: baseURL, limits: limits, deadline: deadline)
                : try AtomParser.parse(clean.data, baseURL: baseURL, limits: limits, deadline: deadline)
            if !clean.warnings.isEmpty { feed.warnings = clean.warnings + feed.warnings }
            return feed
        }
    }

    /// Parses the document a catalog's lookup URL returns for one content id:
    /// `{"offlinefs": 1, "item": {…}}` (see CATALOG-FORMAT.md).
    ///
    /// - Throws: `FeedError`; `invalidItem` when the item is unusable (no id, a forbidden
    ///   media URL, licence terms that cannot be honoured).
    public static func parseLookupItem(_ data: Data, baseURL: URL, limits: FeedLimits = FeedLimits()) throws(FeedError) -> FeedItem {
        try checkSize(data, limits: limits)
        return try JSONCatalogParser.parseLookupItem(data, baseURL: baseURL, limits: limits)
    }

    static let deadlineError = FeedError(.deadline, "Parsing the feed took longer than the time limit; it is too large or built to be slow.")

    private static func checkSize(_ data: Data, limits: FeedLimits) throws(FeedError) {
        guard data.count <= limits.maxDocumentBytes else {
            throw FeedError(
                .tooLarge,
                "The feed is \(data.count) bytes, more than the limit of \(limits.maxDocumentBytes) bytes per feed document.")
        }
        guard data.contains(where: { !FeedText.isSpace($0) }) else {
            throw FeedError(.malformed, "The feed document is empty.")
        }
    }

    private static func unknownFormat(_ data: Data) -> FeedError {
        let html = data.prefix(65_536).withUnsafeBytes { raw in FeedSniffer.looksLikeHTML(raw.bindMemory(to: UInt8.self)) }
        if html {
            return FeedError(.unsupported, "The URL returned an HTML page, not a feed; use the address of the RSS, Atom or offlinefs JSON feed itself.")
        }
        return FeedError(.unsupported, "The document is not a feed offlinefs reads (RSS, Atom or an offlinefs JSON catalog).")
    }
}
