import OfflineFeeds
import OfflineStore

extension CatalogEntry {
    /// A parsed feed item as the store keeps it.
    init(_ item: FeedItem) {
        self.init(
            contentID: item.contentID,
            title: item.title,
            type: ItemType(rawValue: item.type.rawValue) ?? .file,
            mediaURL: item.mediaURL,
            size: item.size.flatMap { $0 > 0 ? $0 : nil },
            mimeType: item.mimeType,
            duration: item.duration,
            publishedAt: item.publishedAt,
            summary: item.summary,
            thumbnailURL: item.thumbnailURL,
            thumbnailSize: item.thumbnailSize,
            subtitles: item.subtitles.map {
                OfflineStore.SubtitleTrack(language: $0.language, url: $0.url, format: $0.format.rawValue, size: $0.size)
            },
            sha256: item.sha256,
            licence: item.licence.map {
                OfflineStore.LicenceTerms(
                    kind: $0.kind == .purchase ? .purchase : .rental,
                    rentalDuration: $0.rentalDuration, playDuration: $0.playDuration, licenceURL: $0.licenceURL)
            },
            categoryPaths: item.categories
        )
    }
}

extension CatalogEntry {
    /// Whether it has every size a sync looks for: its media's (not an HLS playlist's, whose
    /// size is not its media's) and its side files'.
    var isSized: Bool {
        (size != nil || type == .hls) && sideFilesSized
    }

    /// Whether its thumbnail and subtitles, where it has them, have their sizes.
    var sideFilesSized: Bool {
        (thumbnailURL == nil || thumbnailSize != nil) && subtitles.allSatisfy { $0.size != nil }
    }
}
