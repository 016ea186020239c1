import Foundation
import OfflineEngine
import OfflineHTTP
import OfflineStore
import OfflineTestSupport
import Testing

/// First opens of uncached media answered from the origins the engine read at start
/// (`MediaOriginIndex`): the store stays the truth.
@Suite struct MediaOriginIndexTests {
    private func startedFixture(items: [(String, UInt64)]) throws -> (TransferFixture, [Item]) {
        let fixture = try TransferFixture()
        let added = try items.map { try fixture.addItem($0.0, size: 200_000, seed: $0.1) }
        fixture.engine.startThreads()
        fixture.fetcher.waitForWarmUp()
        return (fixture, added)
    }

    @Test func aFirstReadAfterStartGetsTheOriginsBytes() throws {
        let (fixture, items) = try startedFixture(items: [("a.mp4", 1), ("b.mp4", 2)])
        defer { fixture.close() }
        // When a reader opens and reads an uncached item of a started engine
        fixture.fetcher.startFirstWindow(itemID: items[1].id, file: "media")
        guard case .success = fixture.fetch(items[1], 0..<100_000) else { Issue.record("read failed"); return }
        // Then it gets that item's bytes, from its URL
        #expect(try fixture.cachedBytes(items[1], 0..<100_000) == GeneratedBytes(size: 200_000, seed: 2).bytes(in: 0..<100_000))
        #expect(fixture.origin.requests(for: "/a.mp4").isEmpty)
        #expect(!fixture.origin.requests(for: "/b.mp4").isEmpty)
    }

    @Test func aSyncThatMovesAnItemsMediaIsFollowed() throws {
        let (fixture, items) = try startedFixture(items: [("v.mp4", 1)])
        defer { fixture.close() }
        // Given a sync, after the engine started, that gave the item another media URL
        fixture.origin.serve("/moved.mp4", .generated(size: 200_000, seed: 9, contentType: "video/mp4"))
        let source = try #require(try fixture.store.source(named: "src"))
        let moved = CatalogEntry(contentID: "v.mp4", title: "v.mp4", type: .video, mediaURL: fixture.origin.url("/moved.mp4"),
                                 size: 200_000, mimeType: "video/mp4")
        let report = try fixture.store.mergeCatalog(sourceID: source.id, title: "Test", entries: [moved], isComplete: true, now: Date())
        #expect(report.updated == 1)
        // When a reader reads it for the first time
        guard case .success = fixture.fetch(items[0], 0..<1000) else { Issue.record("read failed"); return }
        // Then the bytes come from the new URL
        #expect(try fixture.cachedBytes(items[0], 0..<1000) == GeneratedBytes(size: 200_000, seed: 9).bytes(in: 0..<1000))
        #expect(fixture.origin.requests(for: "/v.mp4").isEmpty)
    }

    @Test func anItemASyncRemovedIsNotFetched() throws {
        let (fixture, items) = try startedFixture(items: [("gone.mp4", 1), ("kept.mp4", 2)])
        defer { fixture.close() }
        // Given a complete sync, after the engine started, whose feed no longer lists an item
        let source = try #require(try fixture.store.source(named: "src"))
        let kept = CatalogEntry(contentID: "kept.mp4", title: "kept.mp4", type: .video, mediaURL: fixture.origin.url("/kept.mp4"),
                                size: 200_000, mimeType: "video/mp4")
        let report = try fixture.store.mergeCatalog(sourceID: source.id, title: "Test", entries: [kept], isComplete: true, now: Date())
        #expect(report.removed == 1)
        // When a reader still asks for its bytes
        let result = fixture.fetch(items[0], 0..<1000)
        // Then none are fetched: the item is gone
        guard case .failure(let error) = result else { Issue.record("a removed item was fetched"); return }
        #expect(error.code == .noSuchItem)
        #expect(fixture.origin.requests(for: "/gone.mp4").isEmpty)
    }

    @Test func bytesClaimedBeforeAStartAreNotFetchedAgain() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        let item = try fixture.addItem("v.mp4", size: 200_000, seed: 3)
        // Given bytes fetched and claimed by an earlier engine
        guard case .success = fixture.fetch(item, 0..<50_000) else { Issue.record("first read failed"); return }
        #expect(try fixture.fetcher.flush(itemID: item.id, file: "media") == nil)
        let requests = fixture.origin.requests(for: "/v.mp4").count
        // When a new engine starts and a reader reads them
        try fixture.restartEngine()
        fixture.engine.startThreads()
        fixture.fetcher.waitForWarmUp()
        guard case .success = fixture.fetch(item, 0..<50_000) else { Issue.record("second read failed"); return }
        // Then they come from the cache file, not from the origin
        #expect(fixture.origin.requests(for: "/v.mp4").count == requests)
        #expect(try fixture.cachedBytes(item, 0..<50_000) == GeneratedBytes(size: 200_000, seed: 3).bytes(in: 0..<50_000))
    }
}
