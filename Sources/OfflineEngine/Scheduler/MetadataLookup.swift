import Foundation
import OfflineFeeds
import OfflineHTTP
import OfflineStore

/// Fetches the metadata of an item requested by content id before any sync listed it
/// ("download to go"): through the source's JSON catalog `lookup` URL when it has one, else
/// by syncing the source. The scheduler retries (DESIGN §1: first try, then 3 retries 10 s
/// apart, then `failed` with `content-not-found`).
struct MetadataLookup: Sendable {
    let store: LibraryStore
    let client: HTTPClient
    let settings: SyncSettings
    /// The engine's own syncer (its HLS choices are the mount's).
    let syncer: CatalogSync
    let now: @Sendable () -> Date

    /// One attempt; true when the item now has metadata.
    func attempt(_ item: Item) -> Bool {
        guard let source = try? store.source(id: item.sourceID) else { return false }
        if let template = try? store.lookupTemplate(sourceID: source.id), let entry = lookup(item, template: template, source: source) {
            _ = try? store.mergeCatalog(sourceID: source.id, title: nil, entries: [entry], isComplete: false, now: now())
        } else {
            _ = syncer.sync(source)
        }
        return (try? store.item(id: item.id))?.mediaURL != nil
    }

    private func lookup(_ item: Item, template: String, source: Source) -> CatalogEntry? {
        let encoded = item.contentID.addingPercentEncoding(withAllowedCharacters: .urlUnreserved) ?? item.contentID
        let url = template.replacingOccurrences(of: "{id}", with: encoded)
        guard let base = URL(string: url) else { return nil }
        let host = URL(string: source.feedURL)?.host ?? ""
        let request = HTTPRequest(url: url, headers: [("Accept", "application/json")],
                                  maxBodyBytes: Int64(settings.feedLimits.maxDocumentBytes),
                                  timeouts: settings.documentTimeouts, acceptCompressed: true,
                                  destinationPolicy: .forFeed(host: host))
        guard case .success(let response) = client.perform(request), response.status == 200,
              let parsed = try? FeedParser.parseLookupItem(response.body, baseURL: base, limits: settings.feedLimits),
              parsed.contentID == item.contentID else { return nil }
        return CatalogEntry(parsed)
    }
}

extension CharacterSet {
    /// RFC 3986 unreserved characters: everything else in a content id is percent-encoded.
    static let urlUnreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}
