import Foundation
import Testing
@testable import OfflineStore

@Suite("Item outlines: what the mount's tree reads")
struct ItemOutlineTests {
    /// Two sources, items in one, two or no categories (nested ones too), hostile titles,
    /// side files, every state the tree shows, a tombstone and a pending item.
    func fill(_ store: LibraryStore) throws {
        let zeta = try store.addSource(name: "zeta", feedURL: "https://z.example/feed")
        let alpha = try store.addSource(name: "alpha", feedURL: "https://a.example/feed")
        var subtitled = entry("subs", title: "Subtitled", categories: [["news", "local"], ["family"]])
        subtitled.subtitles = [SubtitleTrack(language: "fr", url: "https://z.example/fr.srt"),
                               SubtitleTrack(language: "en", url: "https://z.example/en", format: "vtt"),
                               SubtitleTrack(language: "../../x", url: "https://z.example/x.vtt")]
        var bare = entry("bare", title: "Bare", size: nil, categories: [["news"]])
        bare.thumbnailURL = nil
        _ = try store.mergeCatalog(sourceID: zeta.id, title: nil, entries: [
            subtitled, bare,
            entry("slash", title: "../../etc/passwd / x", categories: [["news", "local"]]),
            entry("bidi", title: "evil\u{202E}4pm.exe\n\u{0}tab\there"),
            entry("dot", title: ".hidden"),
            entry("nfd", title: "Cafe\u{301}"),
            entry("long", title: String(repeating: "é", count: 300)),
            entry("gone", title: "Gone"),
            entry("hls", title: "Stream", type: .hls, mime: "application/vnd.apple.mpegurl"),
        ], isComplete: true, now: TestClock.start)
        _ = try store.mergeCatalog(sourceID: alpha.id, title: nil, entries: [
            entry("a2", title: "Same"), entry("a1", title: "Same", categories: [["family"]]), entry("a3", title: "Alpha"),
        ], isComplete: true, now: TestClock.start)

        func id(_ source: String, _ contentID: String) throws -> Int64 {
            try #require(try store.item(source: source, contentID: contentID)).id
        }
        try store.setState(itemID: id("zeta", "gone"), state: .deleted)
        try store.setState(itemID: id("zeta", "bare"), state: .cached)
        try store.setDownloaded(itemID: id("zeta", "bare"), at: TestClock.start.addingTimeInterval(60))
        try store.setState(itemID: id("zeta", "hls"), state: .partiallyCached)
        try store.setState(itemID: id("alpha", "a3"), state: .failed, error: .httpError)
        try store.addPendingItem(sourceID: alpha.id, contentID: "pending")
    }

    @Test("Outlines hold what the full listing holds, in its order, without tombstones or pending items")
    func matchFullListing() throws {
        try withLibrary { store, _ throws in
            try fill(store)
            let outlines = try store.itemOutlines()
            let categoryIDs = Dictionary(uniqueKeysWithValues: try store.categories().map { ($0.path, $0.id) })
            let expected = try store.items(matching: .all).compactMap { listing in
                ItemOutline(listing.item, categoryIDs: listing.categoryPaths.map { categoryIDs[$0]! })
            }
            #expect(outlines.count == 11)
            #expect(outlines.map(\.id) == expected.map(\.id))
            for (outline, full) in zip(outlines, expected) {
                var sorted = outline
                sorted.categoryIDs.sort()
                var fullSorted = full
                fullSorted.categoryIDs.sort()
                #expect(sorted == fullSorted)
            }
        }
    }

    @Test("Outlines carry file names, states, times, side files and category ids")
    func fields() throws {
        try withLibrary { store, _ throws in
            try fill(store)
            let outlines = try store.itemOutlines()
            let sources = Dictionary(uniqueKeysWithValues: try store.sources().map { ($0.id, $0.name) })
            // Source name, then title, then id: the two "Same" items keep their insertion order.
            #expect(outlines.map { "\(sources[$0.sourceID]!)/\($0.fileName)" }.prefix(3)
                    == ["alpha/Alpha [a3].mp4", "alpha/Same [a2].mp4", "alpha/Same [a1].mp4"])
            #expect(!outlines.contains { $0.fileName.contains("/") || $0.fileName.contains("\n") || $0.fileName.contains("\u{202E}") })
            #expect(!outlines.contains { $0.fileName == "Gone [gone].mp4" || $0.state == .deleted || $0.state == .metadataPending })
            #expect(outlines.contains { $0.fileName == "_.hidden [dot].mp4" })
            #expect(outlines.contains { $0.fileName == "Caf\u{E9} [nfd].mp4" && $0.fileName.utf8.count == 15 })
            #expect(outlines.allSatisfy { $0.fileName.utf8.count <= FileNaming.maxBytes })

            let paths = Dictionary(uniqueKeysWithValues: try store.categories().map { ($0.id, $0.path) })
            let subtitled = try #require(outlines.first { $0.fileName == "Subtitled [subs].mp4" })
            #expect(Set(subtitled.categoryIDs.map { paths[$0]! }) == [["news", "local"], ["family"]])
            #expect(subtitled.subtitles.map(\.language) == ["fr", "en", "../../x"])  // catalog order; the tree filters
            #expect(subtitled.subtitles[0] == SubtitleTrack(language: "fr", url: "https://z.example/fr.srt", format: nil))
            #expect(subtitled.subtitles[1].format == "vtt")
            #expect(subtitled.hasThumbnail && subtitled.type == .video && subtitled.state == .discovered)
            #expect(subtitled.size == 1000 && subtitled.bytesPresent == 0 && subtitled.addedAt == TestClock.start)

            let bare = try #require(outlines.first { $0.fileName == "Bare [bare].mp4" })
            #expect(bare.categoryIDs.map { paths[$0]! } == [["news"]])
            #expect(!bare.hasThumbnail && bare.subtitles.isEmpty && bare.size == nil)
            #expect(bare.state == .cached && bare.downloadedAt == TestClock.start.addingTimeInterval(60))
            #expect(bare.publishedAt == nil)

            let stream = try #require(outlines.first { $0.fileName == "Stream [hls].m3u8" })
            #expect(stream.type == .hls && stream.state == .partiallyCached && stream.categoryIDs.isEmpty)
            #expect(outlines.first { $0.fileName == "Alpha [a3].mp4" }?.state == .failed)
        }
    }

    @Test("An outline stays at 160 bytes: a first build of a million-item library holds them all at once")
    func anOutlineIsSmall() {
        #expect(MemoryLayout<ItemOutline>.stride <= 160)
    }

    @Test("An empty library has no outlines")
    func empty() throws {
        try withLibrary { store, _ throws in
            #expect(try store.itemOutlines().isEmpty)
            _ = try store.addSource(name: "acme", feedURL: "https://acme.example/feed")
            #expect(try store.itemOutlines().isEmpty)
        }
    }
}

@Suite("Item outlines: an item whose lookup failed")
struct UnnamedItemOutlineTests {
    @Test func aFailedLookupIsListedByItsContentID() throws {
        try withLibrary { store, _ throws in
            let source = try store.addSource(name: "acme", feedURL: "https://a.example/feed")
            _ = try store.mergeCatalog(sourceID: source.id, title: nil, entries: [entry("a")], isComplete: true, now: TestClock.start)
            let pending = try store.addPendingItem(sourceID: source.id, contentID: "ep/9")
            // Pending: not listed yet.
            #expect(try store.itemOutlines().map(\.fileName) == ["Title a [a].mp4"])
            try store.setState(itemID: pending.id, state: .failed, error: .contentNotFound)
            let outlines = try store.itemOutlines()
            #expect(outlines.map(\.fileName) == ["Title a [a].mp4", "[ep\u{2215}9]"])
            #expect(outlines.last?.namedByContentID == true && outlines.last?.state == .failed)
            // The outline of the full item says the same.
            let item = try #require(try store.item(id: pending.id))
            let full = try #require(ItemOutline(item))
            #expect(full == outlines.last)
        }
    }
}
