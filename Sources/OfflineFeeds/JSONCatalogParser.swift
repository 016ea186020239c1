import Foundation

/// The offlinefs JSON catalog, version 1 (documented in CATALOG-FORMAT.md): a whole catalog
/// page, or the single-item document a lookup URL returns.
enum JSONCatalogParser {
    static let version = 1
    /// Stands in for `{id}` while a lookup template goes through URL resolution, which
    /// would otherwise percent-encode the braces.
    private static let placeholder = "OFFLINEFS-LOOKUP-ID-7f3a"

    static func parse(_ data: Data, baseURL: URL, limits: FeedLimits, deadline: ContinuousClock.Instant) throws(FeedError) -> ParsedFeed {
        var feed = FeedAssembler(limits: limits)
        let document = try decode(data, limits: limits, warnings: &feed.warnings)
        let limit = limits.maxStringBytes

        let categories = CategoryTree(document.categories, limit: limit, warnings: &feed.warnings)
        for path in categories.paths { feed.addCategory(path) }

        if let count = document.itemCountOverLimit {
            throw FeedError(
                .tooManyItems,
                "The catalog has \(count) items, more than the limit of \(limits.maxItems) per document; raise the limit or split the catalog into pages.")
        }
        // A page that says nothing usable is an error, never an empty catalog: merged, it
        // would remove every item not downloaded.
        if document.itemsIsNotArray { throw FeedError(.malformed, "The catalog's \"items\" is not an array.") }
        let reader = JSONItemReader(baseURL: baseURL, limits: limits, categories: categories)
        for (index, item) in document.items.enumerated() {
            if index & 1023 == 1023, ContinuousClock.now >= deadline { throw FeedParser.deadlineError }
            try reader.read(item, into: &feed)
        }
        if feed.itemsRead > 0 && feed.items.isEmpty {
            throw FeedError(.invalidItem, "None of the catalog's \(feed.itemsRead) items can be used (\(feed.warnings.result.first ?? "no reason given")).")
        }

        let source = document.source
        return ParsedFeed(
            kind: .json,
            title: FeedText.clean(source?.title?.value, limit: limit, field: "source title", warnings: &feed.warnings),
            description: FeedText.clean(source?.description?.value, limit: limit, field: "source description", warnings: &feed.warnings),
            link: FeedURL.allowed(source?.link?.value, against: baseURL, what: "source link", warnings: &feed.warnings),
            imageURL: FeedURL.allowed(source?.image?.value, against: baseURL, what: "source image", warnings: &feed.warnings),
            categories: feed.categories,
            items: feed.items,
            nextPageURL: FeedURL.allowed(document.next?.value, against: baseURL, what: "next page URL", warnings: &feed.warnings),
            lookupTemplate: lookupTemplate(document.lookup?.value, baseURL: baseURL, warnings: &feed.warnings),
            warnings: feed.warnings.result)
    }

    /// Reads `{"offlinefs": 1, "item": {…}}` (categories may be declared alongside).
    static func parseLookupItem(_ data: Data, baseURL: URL, limits: FeedLimits) throws(FeedError) -> FeedItem {
        var feed = FeedAssembler(limits: limits)
        let document = try decode(data, limits: limits, warnings: &feed.warnings)
        let categories = CategoryTree(document.categories, limit: limits.maxStringBytes, warnings: &feed.warnings)
        guard let element = document.item ?? document.items.first else {
            throw FeedError(.invalidItem, "The lookup response has no \"item\" object.")
        }
        let reader = JSONItemReader(baseURL: baseURL, limits: limits, categories: categories)
        try reader.read(element, into: &feed)
        guard let item = feed.items.first else {
            let reason = feed.warnings.result.last ?? "the item is unusable"
            throw FeedError(.invalidItem, "The lookup response's item cannot be used: \(reason).")
        }
        return item
    }

    /// Preflight, JSON decode and version check.
    private static func decode(_ data: Data, limits: FeedLimits, warnings: inout FeedWarnings) throws(FeedError) -> CatalogDocument {
        let checked = try JSONPreflight.check(data, maxDepth: limits.maxJSONDepth)
        for warning in checked.warnings { warnings.add(warning) }
        let decoder = JSONDecoder()
        decoder.userInfo[CatalogDocument.maxItemsKey] = limits.maxItems
        let document: CatalogDocument
        do {
            document = try decoder.decode(CatalogDocument.self, from: checked.data)
        } catch DecodingError.typeMismatch {
            throw notACatalog
        } catch {
            throw FeedError(.malformed, "The JSON catalog is not valid JSON (\(shortReason(error))); it may be truncated.")
        }
        guard let version = document.version else { throw notACatalog }
        guard version.value == Double(Self.version) else {
            throw FeedError(
                .unsupported,
                "The catalog is offlinefs format version \(version.text ?? version.value.map { String($0) } ?? "?"); this offlinefs reads version \(Self.version).")
        }
        return document
    }

    private static let notACatalog = FeedError(
        .unsupported, "The JSON document is not an offlinefs catalog (it has no \"offlinefs\": \(version) member).")

    private static func lookupTemplate(_ raw: String?, baseURL: URL, warnings: inout FeedWarnings) -> String? {
        guard let raw else { return nil }
        guard raw.contains("{id}") else {
            warnings.add("lookup URL dropped: it has no {id} placeholder")
            return nil
        }
        let marked = raw.replacingOccurrences(of: "{id}", with: placeholder)
        return FeedURL.allowed(marked, against: baseURL, what: "lookup URL", warnings: &warnings)?
            .replacingOccurrences(of: placeholder, with: "{id}")
    }

    /// Foundation's decoding errors carry a long description; keep its core.
    private static func shortReason(_ error: any Error) -> String {
        if case DecodingError.dataCorrupted(let context) = error {
            let underlying = (context.underlyingError as NSError?)?.userInfo[NSDebugDescriptionErrorKey] as? String
            return String((underlying ?? context.debugDescription).prefix(160))
        }
        return String("\(error)".prefix(160))
    }
}
