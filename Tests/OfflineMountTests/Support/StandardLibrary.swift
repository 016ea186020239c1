import Testing
import Foundation
import OfflineStore

/// The library most mount tests use: two sources, nested categories, cached and remote items
/// of 0, 1 and more bytes, side files.
struct StandardLibrary {
    let fixture: LibraryFixture
    let items: [String: Item]
    let downloadedAt = Date(timeIntervalSince1970: (Date().timeIntervalSince1970).rounded(.down) - 3600)

    static let launch = "Launch Day [ep-001].mp4"
    static let tiny = "Tiny [ep-002].mp4"
    static let empty = "Empty [ep-003].mp4"
    static let remote = "Remote [ep-004].mp4"
    static let queued = "Queued [ep-005].mp4"
    static let other = "Other [b-1].mp4"
    static let launchSideFiles = ["Launch Day [ep-001]-thumb.jpg", "Launch Day [ep-001].en.vtt", "Launch Day [ep-001].pt-BR.vtt"]

    init() throws {
        fixture = try LibraryFixture()
        let acme = try fixture.addSource("acme")
        let beta = try fixture.addSource("beta")
        var items = try fixture.merge(acme, [
            ItemSpec(contentID: "ep-001", title: "Launch Day", size: 3_000_000, seed: 11,
                     categories: [["news", "local"], ["family"]], thumbnail: true, subtitles: ["en", "pt-BR"]),
            ItemSpec(contentID: "ep-002", title: "Tiny", size: 1, seed: 12),
            ItemSpec(contentID: "ep-003", title: "Empty", size: 0, seed: 13),
            ItemSpec(contentID: "ep-004", title: "Remote", size: 500_000, seed: 14, categories: [["family"]]),
            ItemSpec(contentID: "ep-005", title: "Queued", size: 100, seed: 15),
        ])
        items.merge(try fixture.merge(beta, [ItemSpec(contentID: "b-1", title: "Other", size: 200_000, seed: 16, categories: [["news"]])]),
                    uniquingKeysWith: { a, _ in a })
        for id in ["ep-001", "ep-002", "ep-003", "b-1"] { try fixture.cache(items[id]!, downloadedAt: downloadedAt) }
        // Requested but paused: the mount's running engine would download a queued item at
        // once, and listings must be stable.
        try fixture.store.setState(itemID: items["ep-005"]!.id, state: .paused)
        let store = fixture.store
        var refreshed: [String: Item] = [:]
        for (key, item) in items { refreshed[key] = try #require(try store.item(id: item.id)) }
        self.items = refreshed
    }
}
