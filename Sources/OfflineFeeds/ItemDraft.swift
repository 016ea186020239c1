import Foundation

/// The raw strings of one RSS item or Atom entry as they are read, turned into a
/// `FeedItem` (or a skip reason) once the element ends. Shared by both XML grammars,
/// including their Media RSS and iTunes extensions.
struct ItemDraft {
    /// A candidate media URL with what the feed says about it.
    struct Media {
        var url: String
        var mimeType: String?
        var length: String?
        var duration: String?
        var medium: String?
    }

    var id: String?
    var title: String?
    var summary: String?
    /// Used when there is no `description`/`summary` (`media:description`, Atom `content`).
    var fallbackSummary: String?
    var published: String?
    var updated: String?
    /// In order of preference: enclosures first, then Media RSS (default first).
    var enclosures: [Media] = []
    var mediaContents: [Media] = []
    var thumbnail: String?
    var duration: String?
    var categories: [String] = []
    var subtitles: [(language: String?, url: String, mimeType: String?)] = []

    /// Handles the Media RSS and iTunes elements both grammars accept inside an item.
    /// Returns true if the element was one of them and needs its text captured.
    mutating func startExtension(_ name: XMLName, _ attributes: [String: String]) -> Bool {
        switch (name.namespace, name.local) {
        case (.media, "content"):
            if let url = attributes["url"] {
                let media = Media(
                    url: url, mimeType: attributes["type"], length: attributes["fileSize"],
                    duration: attributes["duration"], medium: attributes["medium"])
                if attributes["isDefault"] == "true" { mediaContents.insert(media, at: 0) } else { mediaContents.append(media) }
            }
        case (.media, "thumbnail"):
            if thumbnail == nil { thumbnail = attributes["url"] }
        case (.itunes, "image"):
            // An item's own artwork beats a Media RSS thumbnail.
            if let href = attributes["href"] { thumbnail = href }
        case (.media, "subTitle"):
            if let href = attributes["href"] {
                subtitles.append((attributes["lang"], href, attributes["type"]))
            }
        case (.media, "description"), (.itunes, "duration"), (.itunes, "summary"):
            return true
        default:
            break
        }
        return false
    }

    mutating func endExtension(_ name: XMLName, text: String) {
        switch (name.namespace, name.local) {
        case (.media, "description"), (.itunes, "summary"):
            if fallbackSummary == nil { fallbackSummary = text }
        case (.itunes, "duration"):
            duration = text
        default:
            break
        }
    }

    /// Adds the finished item to `feed`, or records why it was skipped: the first
    /// candidate media URL that passes the URL policy wins.
    func finish(baseURL: URL, limits: FeedLimits, into feed: inout FeedAssembler) throws(FeedError) {
        let limit = limits.maxStringBytes
        var cut = false
        let rawID = id.flatMap { FeedText.clean($0, limit: limit, cut: &cut) }

        var chosen: (media: Media, url: String)?
        var refusedScheme: String?
        for media in enclosures + mediaContents {
            switch FeedURL.resolve(media.url, against: baseURL) {
            case .allowed(let url):
                chosen = (media, url)
            case .forbiddenScheme(let scheme):
                refusedScheme = refusedScheme ?? scheme
            case .invalid:
                break
            }
            if chosen != nil { break }
        }
        guard let (media, mediaURL) = chosen else {
            let reason = refusedScheme.map { "enclosure URL scheme \($0) is not allowed" } ?? "no usable media URL (enclosure)"
            feed.skip(rawID ?? title, because: reason)
            return
        }
        let contentID = rawID ?? mediaURL
        let name = FeedWarnings.quote(contentID)
        let title = FeedText.clean(title.map(HTMLEntities.decode), limit: limit, field: "item \(name) title",
                                   warnings: &feed.warnings) ?? contentID
        let summary =
            FeedText.clean(summary, limit: limit, field: "item \(name) description", warnings: &feed.warnings)
            ?? FeedText.clean(fallbackSummary, limit: limit, field: "item \(name) description", warnings: &feed.warnings)
        let mimeType = media.mimeType.flatMap { FeedText.clean($0, limit: 255, cut: &cut) }
        // A length under 4 KiB is a placeholder (feeds write "0" or "1" for "not known"), no
        // media file's: taken as none, the sync asks the origin (a wrong small size would
        // list the episode that size until something read it).
        let size = media.length.flatMap { Int64(FeedText.trimmed($0)) }.flatMap { $0 >= 4096 ? $0 : nil }
        let itemDuration = (media.duration ?? duration).flatMap(MediaDuration.parse)
        let date = (published ?? updated).flatMap { text in RFC822Date.parse(text) ?? RFC3339Date.parse(text) }
        let thumbnailURL = FeedURL.allowed(thumbnail, against: baseURL, what: "item \(name) thumbnail", warnings: &feed.warnings)

        var tracks: [SubtitleTrack] = []
        for track in subtitles {
            guard let url = FeedURL.allowed(track.url, against: baseURL, what: "item \(name) subtitle", warnings: &feed.warnings)
            else { continue }
            guard let format = SubtitleTrack.format(mimeType: track.mimeType, url: url) else {
                feed.warnings.add("item \(name) subtitle dropped: format is neither vtt nor srt")
                continue
            }
            let language = track.language.flatMap { FeedText.clean($0, limit: 64, cut: &cut) } ?? "und"
            tracks.append(SubtitleTrack(language: language, url: url, format: format))
        }
        var paths: [[String]] = []
        for category in categories {
            guard let clean = FeedText.clean(category, limit: limit, cut: &cut) else { continue }
            if !paths.contains([clean]) { paths.append([clean]) }
        }

        try feed.add(
            FeedItem(
                contentID: contentID, title: title,
                type: MediaTypeGuess.guess(mimeType: mimeType, url: mediaURL, medium: media.medium),
                mediaURL: mediaURL, size: size, mimeType: mimeType, duration: itemDuration, publishedAt: date,
                summary: summary, thumbnailURL: thumbnailURL, subtitles: tracks, categories: paths))
    }
}

extension SubtitleTrack {
    /// `vtt`/`srt` from a format name, MIME type or the URL's extension.
    static func format(mimeType: String?, url: String) -> SubtitleFormat? {
        switch mimeType.map(MediaTypeGuess.essence) {
        case "text/vtt", "vtt", "webvtt": return .vtt
        case "application/x-subrip", "text/srt", "application/srt", "srt", "subrip": return .srt
        default: break
        }
        switch MediaTypeGuess.pathExtension(of: url) {
        case "vtt": return .vtt
        case "srt": return .srt
        default: return nil
        }
    }
}
