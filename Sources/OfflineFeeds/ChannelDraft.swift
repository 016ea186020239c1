import Foundation

/// Channel-level fields shared by the RSS and Atom grammars.
struct ChannelDraft {
    var title: String?
    var description: String?
    var link: String?
    var image: String?
    var itunesImage: String?
    var next: String?

    /// `<link>` with text (RSS) or `href` + `rel` (Atom, `atom:link` in RSS).
    mutating func link(_ attributes: [String: String], reader: XMLFeedReader) {
        guard let href = attributes["href"] else {
            reader.captureText()
            return
        }
        switch attributes["rel"] ?? "alternate" {
        case "next": next = next ?? href
        case "alternate": link = link ?? href
        default: break
        }
    }

    func finish(kind: FeedKind, baseURL: URL, limits: FeedLimits, feed: FeedAssembler) -> ParsedFeed {
        var feed = feed
        let limit = limits.maxStringBytes
        return ParsedFeed(
            kind: kind,
            title: FeedText.clean(title, limit: limit, field: "feed title", warnings: &feed.warnings),
            description: FeedText.clean(description, limit: limit, field: "feed description", warnings: &feed.warnings),
            link: FeedURL.allowed(link, against: baseURL, what: "feed link", warnings: &feed.warnings),
            imageURL: FeedURL.allowed(itunesImage ?? image, against: baseURL, what: "feed image", warnings: &feed.warnings),
            categories: feed.categories,
            items: feed.items,
            nextPageURL: FeedURL.allowed(next, against: baseURL, what: "next page link", warnings: &feed.warnings),
            warnings: feed.warnings.result)
    }
}
