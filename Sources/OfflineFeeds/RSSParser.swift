import Foundation

/// RSS 2.0 (and RSS 1.0/RDF) with the podcast extensions offlinefs reads: `<enclosure>`,
/// Media RSS (`media:content`, `media:group`, `media:thumbnail`, `media:subTitle`), iTunes
/// (`itunes:duration`, `itunes:image`), `<category>`, `<guid>`, `<pubDate>`, and RFC 5005
/// paging (`<atom:link rel="next">`).
final class RSSParser: XMLFeedGrammar {
    private let baseURL: URL
    private let limits: FeedLimits
    private(set) var feed: FeedAssembler
    private var channel = ChannelDraft()
    private var item: ItemDraft?
    private var itemDepth = 0
    private var imageDepth: Int?

    static func parse(_ data: Data, baseURL: URL, limits: FeedLimits, deadline: ContinuousClock.Instant) throws(FeedError) -> ParsedFeed {
        let grammar = RSSParser(baseURL: baseURL, limits: limits)
        let reader = XMLFeedReader(grammar: grammar, deadline: deadline, maxStringBytes: limits.maxStringBytes)
        try reader.run(data, what: "RSS feed")
        let root = reader.rootName.map { $0.split(separator: ":").last.map(String.init) ?? $0 }
        guard root == "rss" || root == "RDF" else {
            throw FeedError(.unsupported, "The document is XML but not an RSS feed (its root element is <\(reader.rootName ?? "none")>).")
        }
        var feed = grammar.feed
        for note in reader.notes { feed.warnings.add(note) }
        return grammar.channel.finish(kind: .rss, baseURL: baseURL, limits: limits, feed: feed)
    }

    private init(baseURL: URL, limits: FeedLimits) {
        self.baseURL = baseURL
        self.limits = limits
        self.feed = FeedAssembler(limits: limits)
    }

    func start(_ name: XMLName, attributes: [String: String], depth: Int, reader: XMLFeedReader) throws(FeedError) {
        if item != nil {
            startInItem(name, attributes, depth: depth, reader: reader)
            return
        }
        switch (name.namespace, name.local) {
        case (.none, "item"):
            item = ItemDraft()
            itemDepth = depth
        case (.none, "image"):
            if imageDepth == nil { imageDepth = depth }
        case (.none, "url"):
            if let imageDepth, depth == imageDepth + 1 { reader.captureText() }
        case (.none, "title"), (.none, "description"):
            // Channel children only: <image> and <textInput> have titles of their own.
            if depth == 3, imageDepth == nil { reader.captureText() }
        case (.none, "link"):
            if depth == 3, imageDepth == nil { channel.link(attributes, reader: reader) }
        case (.atom, "link"):
            channel.link(attributes, reader: reader)
        case (.itunes, "image"):
            channel.itunesImage = attributes["href"] ?? channel.itunesImage
        default:
            break
        }
    }

    private func startInItem(_ name: XMLName, _ attributes: [String: String], depth: Int, reader: XMLFeedReader) {
        switch (name.namespace, name.local) {
        case (.none, "enclosure"):
            if let url = attributes["url"] {
                item?.enclosures.append(.init(url: url, mimeType: attributes["type"], length: attributes["length"]))
            }
        case (.none, "guid"), (.none, "title"), (.none, "description"), (.none, "pubDate"), (.none, "category"),
            (.none, "link"):
            if depth == itemDepth + 1 { reader.captureText() }
        default:
            if item?.startExtension(name, attributes) == true { reader.captureText() }
        }
    }

    func end(_ name: XMLName, text: String?, depth: Int, reader: XMLFeedReader) throws(FeedError) {
        if var current = item {
            if depth == itemDepth {
                item = nil
                try current.finish(baseURL: baseURL, limits: limits, into: &feed)
                return
            }
            if let text {
                switch (name.namespace, name.local) {
                case (.none, "guid"): current.id = text
                case (.none, "title"): current.title = text
                case (.none, "description"): current.summary = text
                case (.none, "pubDate"): current.published = text
                case (.none, "category"): current.categories.append(text)
                case (.none, "link"):
                    // A plain <link> is a web page, not media; keep it only as the id of
                    // last resort (RSS 1.0 items have no guid).
                    if current.id == nil, reader.rootName?.hasSuffix("RDF") == true { current.id = text }
                default: current.endExtension(name, text: text)
                }
            }
            item = current
            return
        }
        if name.namespace == .none, name.local == "image", depth == imageDepth { imageDepth = nil }
        guard let text else { return }
        switch name.local {
        case "url": channel.image = channel.image ?? text
        case "title": channel.title = channel.title ?? text
        case "description": channel.description = channel.description ?? text
        case "link": channel.link = channel.link ?? text
        default: break
        }
    }
}
