import Foundation

/// Atom 1.0 (RFC 4287): `<entry>` with `<id>`, `<title>`, `<link rel="enclosure">`,
/// `<published>`/`<updated>`, `<category term label>`, `<summary>` (else `<content>`),
/// plus Media RSS inside entries (as YouTube's feeds use) and `<link rel="next">` paging.
final class AtomParser: XMLFeedGrammar {
    private let baseURL: URL
    private let limits: FeedLimits
    private(set) var feed: FeedAssembler
    private var channel = ChannelDraft()
    private var entry: ItemDraft?
    private var entryDepth = 0

    static func parse(_ data: Data, baseURL: URL, limits: FeedLimits, deadline: ContinuousClock.Instant) throws(FeedError) -> ParsedFeed {
        let grammar = AtomParser(baseURL: baseURL, limits: limits)
        let reader = XMLFeedReader(grammar: grammar, deadline: deadline, maxStringBytes: limits.maxStringBytes)
        try reader.run(data, what: "Atom feed")
        let root = reader.rootName.map { $0.split(separator: ":").last.map(String.init) ?? $0 }
        guard root == "feed" else {
            throw FeedError(.unsupported, "The document is XML but not an Atom feed (its root element is <\(reader.rootName ?? "none")>).")
        }
        var feed = grammar.feed
        for note in reader.notes { feed.warnings.add(note) }
        return grammar.channel.finish(kind: .atom, baseURL: baseURL, limits: limits, feed: feed)
    }

    private init(baseURL: URL, limits: FeedLimits) {
        self.baseURL = baseURL
        self.limits = limits
        self.feed = FeedAssembler(limits: limits)
    }

    /// Atom elements are unprefixed (default namespace) or bound to a prefix for Atom.
    private static func isAtom(_ name: XMLName) -> Bool { name.namespace == .none || name.namespace == .atom }

    func start(_ name: XMLName, attributes: [String: String], depth: Int, reader: XMLFeedReader) throws(FeedError) {
        if entry != nil {
            startInEntry(name, attributes, depth: depth, reader: reader)
            return
        }
        guard depth == 2, Self.isAtom(name) else {
            if depth == 2, name.namespace == .itunes, name.local == "image" { channel.itunesImage = attributes["href"] }
            return
        }
        switch name.local {
        case "entry":
            entry = ItemDraft()
            entryDepth = depth
        case "title", "subtitle", "icon", "logo":
            reader.captureText()
        case "link":
            if attributes["href"] != nil { channel.link(attributes, reader: reader) }
        default:
            break
        }
    }

    private func startInEntry(_ name: XMLName, _ attributes: [String: String], depth: Int, reader: XMLFeedReader) {
        guard depth == entryDepth + 1, Self.isAtom(name) else {
            if entry?.startExtension(name, attributes) == true { reader.captureText() }
            return
        }
        switch name.local {
        case "id", "title", "summary", "published", "updated":
            reader.captureText()
        case "content":
            // Out-of-line media content (`<content src type>`) is a media candidate;
            // inline content is a description of last resort.
            if let src = attributes["src"] {
                entry?.mediaContents.append(.init(url: src, mimeType: attributes["type"]))
            } else {
                reader.captureText()
            }
        case "link":
            guard let href = attributes["href"], attributes["rel"] == "enclosure" else { return }
            entry?.enclosures.append(.init(url: href, mimeType: attributes["type"], length: attributes["length"]))
        case "category":
            if let name = attributes["label"] ?? attributes["term"] { entry?.categories.append(name) }
        default:
            break
        }
    }

    func end(_ name: XMLName, text: String?, depth: Int, reader: XMLFeedReader) throws(FeedError) {
        if var current = entry {
            if depth == entryDepth {
                entry = nil
                try current.finish(baseURL: baseURL, limits: limits, into: &feed)
                return
            }
            if let text {
                if depth == entryDepth + 1, Self.isAtom(name) {
                    switch name.local {
                    case "id": current.id = text
                    case "title": current.title = text
                    case "summary": current.summary = text
                    case "content": current.fallbackSummary = current.fallbackSummary ?? text
                    case "published": current.published = text
                    case "updated": current.updated = text
                    default: break
                    }
                } else {
                    current.endExtension(name, text: text)
                }
            }
            entry = current
            return
        }
        guard let text else { return }
        switch name.local {
        case "title": channel.title = channel.title ?? text
        case "subtitle": channel.description = channel.description ?? text
        case "logo": channel.image = text
        case "icon": channel.image = channel.image ?? text
        default: break
        }
    }
}
