import Foundation

/// Turns one JSON catalog item object into a `FeedItem`, or skips it with a warning.
/// Optional fields that are wrong are dropped with a warning; the item is skipped only when
/// it cannot be used safely (no id, no allowed media URL, licence terms it cannot honour).
struct JSONItemReader {
    let baseURL: URL
    let limits: FeedLimits
    let categories: CategoryTree

    func read(_ element: Any, index: Int, into feed: inout FeedAssembler) throws(FeedError) {
        let limit = limits.maxStringBytes
        var cut = false
        guard let object = JSONField.object(element) else {
            feed.skip(nil, because: "it is not an object")
            return
        }
        guard let id = JSONField.string(object["id"]).flatMap({ FeedText.clean($0, limit: limit, cut: &cut) }) else {
            feed.skip(nil, because: "it has no \"id\"")
            return
        }
        let name = FeedWarnings.quote(id)
        guard let rawURL = JSONField.string(object["url"]) else {
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
        switch readLicence(object["licence"] ?? object["license"], warnings: &feed.warnings) {
        case .success(let terms): licence = terms
        case .failure(let reason):
            feed.skip(id, because: reason.message)
            return
        }

        let mimeType = JSONField.string(object["mimeType"]).flatMap { FeedText.clean($0, limit: 255, cut: &cut) }
        var type = MediaTypeGuess.guess(mimeType: mimeType, url: mediaURL)
        if let declared = JSONField.string(object["type"]) {
            if let known = MediaType(rawValue: declared.lowercased()) {
                type = known
            } else {
                feed.warnings.add("item \(name): unknown type \(FeedWarnings.quote(declared)); using \(type.rawValue)")
            }
        }
        var size = JSONField.int64(object["size"])
        if let value = size, value < 0 { size = nil }
        let duration: Double? =
            (object["duration"] as? String).flatMap(MediaDuration.parse) ?? JSONField.double(object["duration"]).flatMap(MediaDuration.valid)

        try feed.add(
            FeedItem(
                contentID: id,
                title: FeedText.clean(JSONField.string(object["title"]), limit: limit, field: "item \(name) title", warnings: &feed.warnings) ?? id,
                type: type, mediaURL: mediaURL, size: size, mimeType: mimeType, duration: duration,
                publishedAt: date(object["published"]),
                summary: FeedText.clean(JSONField.string(object["description"]), limit: limit, field: "item \(name) description", warnings: &feed.warnings),
                thumbnailURL: FeedURL.allowed(JSONField.string(object["thumbnail"]), against: baseURL, what: "item \(name) thumbnail", warnings: &feed.warnings),
                subtitles: subtitles(object["subtitles"], item: name, warnings: &feed.warnings),
                sha256: sha256(object["sha256"], item: name, warnings: &feed.warnings),
                licence: licence,
                categories: categoryPaths(object["categories"], item: name, warnings: &feed.warnings)))
    }

    private func date(_ value: Any?) -> Date? {
        if let text = value as? String { return RFC3339Date.parse(text) ?? RFC822Date.parse(text) }
        return JSONField.double(value).flatMap { $0.isFinite ? Date(timeIntervalSince1970: $0) : nil }
    }

    private func sha256(_ value: Any?, item: String, warnings: inout FeedWarnings) -> String? {
        guard let text = JSONField.string(value) else { return nil }
        let hex = text.lowercased()
        guard hex.utf8.count == 64, hex.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }) else {
            warnings.add("item \(item) sha256 dropped: it is not 64 hexadecimal digits")
            return nil
        }
        return hex
    }

    private func subtitles(_ value: Any?, item: String, warnings: inout FeedWarnings) -> [SubtitleTrack] {
        guard let list = JSONField.array(value) else { return [] }
        var tracks: [SubtitleTrack] = []
        var cut = false
        for element in list.prefix(100) {
            guard let object = JSONField.object(element),
                let url = FeedURL.allowed(JSONField.string(object["url"]), against: baseURL, what: "item \(item) subtitle", warnings: &warnings)
            else { continue }
            guard let format = SubtitleTrack.format(mimeType: JSONField.string(object["format"]), url: url) else {
                warnings.add("item \(item) subtitle dropped: format is neither vtt nor srt")
                continue
            }
            let language = JSONField.string(object["language"]).flatMap { FeedText.clean($0, limit: 64, cut: &cut) } ?? "und"
            tracks.append(SubtitleTrack(language: language, url: url, format: format))
        }
        return tracks
    }

    private func categoryPaths(_ value: Any?, item: String, warnings: inout FeedWarnings) -> [[String]] {
        guard let list = JSONField.array(value) else { return [] }
        var paths: [[String]] = []
        for element in list.prefix(1000) {
            guard let id = JSONField.string(element) else { continue }
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
    private func readLicence(_ value: Any?, warnings: inout FeedWarnings) -> Result<LicenceTerms?, Refusal> {
        guard let value, !(value is NSNull) else { return .success(nil) }
        guard let object = JSONField.object(value) else { return .failure(Refusal(message: "\"licence\" is not an object")) }
        guard let kindText = JSONField.string(object["kind"]), let kind = LicenceTerms.Kind(rawValue: kindText.lowercased()) else {
            return .failure(Refusal(message: "licence kind is missing or not \"purchase\"/\"rental\""))
        }
        var terms = LicenceTerms(kind: kind)
        for (key, keyPath) in [("rentalDuration", \LicenceTerms.rentalDuration), ("playDuration", \LicenceTerms.playDuration)] {
            guard let raw = object[key], !(raw is NSNull) else { continue }
            guard let seconds = JSONField.double(raw), seconds.isFinite, seconds > 0 else {
                return .failure(Refusal(message: "licence \(key) is not a positive number of seconds"))
            }
            terms[keyPath: keyPath] = seconds
        }
        if let raw = JSONField.string(object["url"]) {
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
