import Foundation

/// Turns one decoded catalog item into a `FeedItem`, or skips it with a warning.
/// Optional fields that are wrong are dropped with a warning; the item is skipped only when
/// it cannot be used safely (no id, no allowed media URL, licence terms it cannot honour).
struct JSONItemReader {
    let baseURL: URL
    let limits: FeedLimits
    let categories: CategoryTree

    func read(_ object: CatalogItem, into feed: inout FeedAssembler) throws(FeedError) {
        let limit = limits.maxStringBytes
        var cut = false
        guard object.isObject else {
            feed.skip(nil, because: "it is not an object")
            return
        }
        guard let id = object.id?.value.flatMap({ FeedText.clean($0, limit: limit, cut: &cut) }) else {
            feed.skip(nil, because: "it has no \"id\"")
            return
        }
        let name = FeedWarnings.quote(id)
        guard let rawURL = object.url?.value else {
            feed.skip(id, because: "it has no \"url\"")
            return
        }
        let mediaURL: String
        switch FeedURL.resolve(rawURL, against: baseURL) {
        case .allowed(let url): mediaURL = url
        case .forbiddenScheme(let scheme):
            feed.skip(id, because: "media URL scheme \(scheme) is not allowed")
            return
        case .invalid:
            feed.skip(id, because: "\(FeedWarnings.quote(rawURL)) is not a valid URL")
            return
        }
        let licence: LicenceTerms?
        switch readLicence(object.licence) {
        case .success(let terms): licence = terms
        case .failure(let reason):
            feed.skip(id, because: reason.message)
            return
        }

        let mimeType = object.mimeType?.value.flatMap { FeedText.clean($0, limit: 255, cut: &cut) }
        var type = MediaTypeGuess.guess(mimeType: mimeType, url: mediaURL)
        if let declared = object.type?.value {
            if let known = MediaType(rawValue: declared.lowercased()) {
                type = known
            } else {
                feed.warnings.add("item \(name): unknown type \(FeedWarnings.quote(declared)); using \(type.rawValue)")
            }
        }
        var size = object.size?.int64
        if let value = size, value < 0 { size = nil }
        let duration = object.duration?.text.flatMap(MediaDuration.parse) ?? object.duration?.value.flatMap(MediaDuration.valid)

        try feed.add(
            FeedItem(
                contentID: id,
                title: FeedText.clean(object.title?.value, limit: limit, field: "item \(name) title", warnings: &feed.warnings) ?? id,
                type: type, mediaURL: mediaURL, size: size, mimeType: mimeType, duration: duration,
                publishedAt: date(object.published),
                summary: FeedText.clean(object.description?.value, limit: limit, field: "item \(name) description", warnings: &feed.warnings),
                thumbnailURL: FeedURL.allowed(object.thumbnail?.value, against: baseURL, what: "item \(name) thumbnail", warnings: &feed.warnings),
                thumbnailSize: Self.positive(object.thumbnailSize?.int64),
                subtitles: subtitles(object.subtitles, item: name, warnings: &feed.warnings),
                sha256: sha256(object.sha256?.value, item: name, warnings: &feed.warnings),
                licence: licence,
                categories: categoryPaths(object.categories, item: name, warnings: &feed.warnings)))
    }

    /// An ISO 8601 string (RFC 822 accepted too), or a number of seconds since 1970.
    private func date(_ value: LenientNumber?) -> Date? {
        if let text = value?.text { return RFC3339Date.parse(text) ?? RFC822Date.parse(text) }
        return value?.value.map { Date(timeIntervalSince1970: $0) }
    }

    private func sha256(_ text: String?, item: String, warnings: inout FeedWarnings) -> String? {
        guard let text else { return nil }
        let hex = text.lowercased()
        guard hex.utf8.count == 64, hex.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }) else {
            warnings.add("item \(item) sha256 dropped: it is not 64 hexadecimal digits")
            return nil
        }
        return hex
    }

    private func subtitles(_ list: [LenientObject<CatalogSubtitle>]?, item: String, warnings: inout FeedWarnings) -> [SubtitleTrack] {
        guard let list else { return [] }
        var tracks: [SubtitleTrack] = []
        var cut = false
        for element in list.prefix(100) {
            guard let subtitle = element.value,
                let url = FeedURL.allowed(subtitle.url?.value, against: baseURL, what: "item \(item) subtitle", warnings: &warnings)
            else { continue }
            guard let format = SubtitleTrack.format(mimeType: subtitle.format?.value, url: url) else {
                warnings.add("item \(item) subtitle dropped: format is neither vtt nor srt")
                continue
            }
            let language = subtitle.language?.value.flatMap { FeedText.clean($0, limit: 64, cut: &cut) } ?? "und"
            tracks.append(SubtitleTrack(language: language, url: url, format: format, size: Self.positive(subtitle.size?.int64)))
        }
        return tracks
    }

    /// A side file's stated size; 0 or less says nothing (feeds write 0 for "unknown").
    private static func positive(_ size: Int64?) -> Int64? {
        size.flatMap { $0 > 0 ? $0 : nil }
    }

    private func categoryPaths(_ list: [LenientString]?, item: String, warnings: inout FeedWarnings) -> [[String]] {
        guard let list else { return [] }
        var paths: [[String]] = []
        for element in list.prefix(1000) {
            guard let id = element.value else { continue }
            guard let path = categories.path(of: id) else {
                warnings.add("item \(item): unknown category \(FeedWarnings.quote(id)) ignored")
                continue
            }
            if !paths.contains(path) { paths.append(path) }
        }
        return paths
    }

    private struct Refusal: Error { var message: String }

    /// Licence terms, nil when there are none, or why the item must be skipped: terms
    /// offlinefs cannot honour must not turn into "never expires".
    private func readLicence(_ member: LenientObject<CatalogLicence>?) -> Result<LicenceTerms?, Refusal> {
        guard let member else { return .success(nil) }
        guard let licence = member.value else { return .failure(Refusal(message: "\"licence\" is not an object")) }
        guard let kindText = licence.kind?.value, let kind = LicenceTerms.Kind(rawValue: kindText.lowercased()) else {
            return .failure(Refusal(message: "licence kind is missing or not \"purchase\"/\"rental\""))
        }
        var terms = LicenceTerms(kind: kind)
        for (key, field, keyPath) in [
            ("rentalDuration", licence.rentalDuration, \LicenceTerms.rentalDuration),
            ("playDuration", licence.playDuration, \LicenceTerms.playDuration),
        ] {
            guard let field else { continue }
            guard let seconds = field.value, seconds > 0 else {
                return .failure(Refusal(message: "licence \(key) is not a positive number of seconds"))
            }
            terms[keyPath: keyPath] = seconds
        }
        if let raw = licence.url?.value {
            switch FeedURL.resolve(raw, against: baseURL) {
            case .allowed(let url): terms.licenceURL = url
            case .forbiddenScheme(let scheme): return .failure(Refusal(message: "licence URL scheme \(scheme) is not allowed"))
            case .invalid: return .failure(Refusal(message: "licence URL is not a valid URL"))
            }
        }
        if kind == .rental, terms.rentalDuration == nil, terms.licenceURL == nil {
            return .failure(Refusal(message: "a rental licence needs a rentalDuration or a licence url"))
        }
        return .success(terms)
    }
}
