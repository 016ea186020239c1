import Foundation
@testable import OfflineEngine
import OfflineStore
import Testing

/// The registry of chosen HLS renditions holds what the HLS items with one need, however many
/// other items it is asked about (an eviction asks about every item it drops).
@Suite struct HLSStreamsMemoryTests {
    @Test func askingAboutItemsWithoutARenditionKeepsNothingForThem() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        // Given an HLS item whose rendition was stored before the registry existed, and 300 plain items
        let hlsItem = try HLSDownloadFailureTests.addPublicSourceItem(fixture, mediaURL: "https://cdn.example/show/master.m3u8")
        try fixture.store.putHLSStream(HLSStreamRecord(
            itemID: hlsItem.id, playlistURL: "https://cdn.example/show/index.m3u8",
            playlist: Data("#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\nhttps://cdn.example/a.ts\n#EXT-X-ENDLIST\n".utf8),
            quality: nil, estimatedSize: nil, chosenAt: Date()))
        let source = try fixture.store.addSource(name: "plain", feedURL: "https://feeds.example/plain.json")
        let entries = (0..<300).map { CatalogEntry(contentID: "e\($0)", title: "e\($0)", type: .video, mediaURL: "https://cdn.example/e\($0).mp4") }
        _ = try fixture.store.mergeCatalog(sourceID: source.id, title: "Plain", entries: entries, isComplete: true, now: Date())
        let plainIDs = try (0..<300).map { try #require(try fixture.store.item(source: "plain", contentID: "e\($0)")).id }
        let hls = HLSStreams(store: fixture.store)
        // When it is asked about every plain item and 1,000 ids no item has
        for id in plainIDs + (1_000_000..<1_001_000).map(Int64.init) { #expect(hls.stream(itemID: id) == nil) }
        // Then it holds the HLS item only, whose rendition it finds
        #expect(hls.itemsKept == 1)
        #expect(hls.stream(itemID: hlsItem.id)?.record.playlistURL == "https://cdn.example/show/index.m3u8")
        #expect(hls.itemsKept == 1)
        // And once forgotten, the rendition is gone from the store and the registry
        hls.forget(itemID: hlsItem.id)
        #expect(hls.stream(itemID: hlsItem.id) == nil)
        #expect(try fixture.store.hlsStream(itemID: hlsItem.id) == nil)
        #expect(hls.itemsKept == 0)
    }
}
