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
        let root = try root(of: data, limits: limits, warnings: &feed.warnings)
        let limit = limits.maxStringBytes

        let categories = CategoryTree(JSONField.array(root["categories"]) ?? [], limit: limit, warnings: &feed.warnings)
        for path in categories.paths { feed.addCategory(path) }

        let items = JSONField.array(root["items"]) ?? []
        if root["items"] != nil && JSONField.array(root["items"]) == nil {
            feed.warnings.add("\"items\" is not an array; no items read")
        }
        guard items.count <= limits.maxItems else {
            throw FeedError(
                .tooManyItems,
                "The catalog has \(items.count) items, more than the limit of \(limits.maxItems) per document; raise the limit or split the catalog into pages.")
        }
        let reader = JSONItemReader(baseURL: baseURL, limits: limits, categories: categories)
        for (index, element) in items.enumerated() {
            if index & 1023 == 1023, ContinuousClock.now >= deadline { throw FeedParser.deadlineError }
            try reader.read(element, index: index, into: &feed)
        }

        let source = JSONField.object(root["source"]) ?? [:]
        return ParsedFeed(
            kind: .json,
            title: FeedText.clean(JSONField.string(source["title"]), limit: limit, field: "source title", warnings: &feed.warnings),
            description: FeedText.clean(JSONField.string(source["description"]), limit: limit, field: "source description", warnings: &feed.warnings),
            link: FeedURL.allowed(JSONField.string(source["link"]), against: baseURL, what: "source link", warnings: &feed.warnings),
            imageURL: FeedURL.allowed(JSONField.string(source["image"]), against: baseURL, what: "source image", warnings: &feed.warnings),
            categories: feed.categories,
            items: feed.items,
            nextPageURL: FeedURL.allowed(JSONField.string(root["next"]), against: baseURL, what: "next page URL", warnings: &feed.warnings),
            lookupTemplate: lookupTemplate(JSONField.string(root["lookup"]), baseURL: baseURL, warnings: &feed.warnings),
            warnings: feed.warnings.result)
    }

    /// Reads `{"offlinefs": 1, "item": {…}}` (categories may be declared alongside).
    static func parseLookupItem(_ data: Data, baseURL: URL, limits: FeedLimits) throws(FeedError) -> FeedItem {
        var feed = FeedAssembler(limits: limits)
        let root = try root(of: data, limits: limits, warnings: &feed.warnings)
        let categories = CategoryTree(JSONField.array(root["categories"]) ?? [], limit: limits.maxStringBytes, warnings: &feed.warnings)
        guard let element = root["item"] ?? JSONField.array(root["items"])?.first else {
            throw FeedError(.invalidItem, "The lookup response has no \"item\" object.")
        }
        let reader = JSONItemReader(baseURL: baseURL, limits: limits, categories: categories)
        try reader.read(element, index: 0, into: &feed)
        guard let item = feed.items.first else {
            let reason = feed.warnings.result.last ?? "the item is unusable"
            throw FeedError(.invalidItem, "The lookup response's item cannot be used: \(reason).")
        }
        return item
    }

    /// Preflight, JSON parse and version check.
    private static func root(of data: Data, limits: FeedLimits, warnings: inout FeedWarnings) throws(FeedError) -> [String: Any] {
        let checked = try JSONPreflight.check(data, maxDepth: limits.maxJSONDepth)
        for warning in checked.warnings { warnings.add(warning) }
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: checked.data, options: [])
        } catch {
            throw FeedError(.malformed, "The JSON catalog is not valid JSON (\(shortReason(error))); it may be truncated.")
        }
        guard let root = object as? [String: Any], let declared = root["offlinefs"] else {
            throw FeedError(.unsupported, "The JSON document is not an offlinefs catalog (it has no \"offlinefs\": \(version) member).")
        }
        guard JSONField.int64(declared) == Int64(version) else {
            throw FeedError(
                .unsupported,
                "The catalog is offlinefs format version \(JSONField.string(declared) ?? "?"); this offlinefs reads version \(version).")
        }
        return root
    }

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

    /// Foundation's JSON errors carry a long debug description; keep the first sentence.
    private static func shortReason(_ error: any Error) -> String {
        let text = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "\(error)"
        return String(text.prefix(160))
    }
}
