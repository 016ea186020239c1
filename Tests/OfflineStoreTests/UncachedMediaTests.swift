import Foundation
import Testing
@testable import OfflineStore

@Suite("Uncached media origins and catalog changes")
struct UncachedMediaTests {
    private func uncached(_ store: LibraryStore) throws -> [(Int64, String, String)] {
        var rows: [(Int64, String, String)] = []
        try store.forEachUncachedMedia { rows.append(($0, $1, $2)) }
        return rows
    }

    @Test("Items with a media URL and no cache record are listed, with their feed URL, by id")
    func listsUncachedMedia() throws {
        try withLibrary { store, _ throws in
            let source = try store.addSource(name: "acme", feedURL: "https://acme.example/c.json")
            _ = try store.mergeCatalog(sourceID: source.id, title: nil, entries: [entry("a"), entry("b"), entry("c")],
                                       isComplete: true, now: TestClock.start)
            let ids = try ["a", "b", "c"].map { try #require(try store.item(source: "acme", contentID: $0)).id }
            // Given one item with claimed bytes and one with only a validator
            try store.commitPresentRanges(itemID: ids[0], file: "media", ranges: [0..<10], validator: nil)
            try store.resetCache(itemID: ids[1], file: "media", validator: CacheValidator(etag: "\"v\""))
            // Then only the third is listed, as `cacheFileRecord` would describe it
            let rows = try uncached(store)
            #expect(rows.map(\.0) == [ids[2]])
            #expect(rows.first?.1 == "https://example.com/media/c.mp4")
            #expect(rows.first?.2 == "https://acme.example/c.json")
            let record = try #require(try store.cacheFileRecord(itemID: ids[2], file: "media"))
            #expect(record.validator == nil && record.ranges.isEmpty && record.source.mediaURL == rows.first?.1)
        }
    }

    @Test("A merge that changes or removes items moves the catalog generation; one that changes nothing does not")
    func mergesMoveTheGeneration() throws {
        try withLibrary { store, _ throws in
            let source = try store.addSource(name: "acme", feedURL: "https://acme.example/c.json")
            _ = try store.mergeCatalog(sourceID: source.id, title: nil, entries: [entry("a"), entry("b")],
                                       isComplete: true, now: TestClock.start)
            var generation = store.catalogChanges.generation
            // When the same catalog is merged again, or a new item added
            _ = try store.mergeCatalog(sourceID: source.id, title: nil, entries: [entry("a"), entry("b"), entry("c")],
                                       isComplete: true, now: TestClock.start)
            // Then no origin changed
            #expect(store.catalogChanges.generation == generation)
            // When an item's media moves
            var moved = entry("a")
            moved.mediaURL = "https://cdn.example/a.mp4"
            _ = try store.mergeCatalog(sourceID: source.id, title: nil, entries: [moved, entry("b"), entry("c")],
                                       isComplete: true, now: TestClock.start)
            #expect(store.catalogChanges.generation > generation)
            generation = store.catalogChanges.generation
            // When an item leaves the catalog
            _ = try store.mergeCatalog(sourceID: source.id, title: nil, entries: [moved, entry("b")],
                                       isComplete: true, now: TestClock.start)
            #expect(store.catalogChanges.generation > generation)
            generation = store.catalogChanges.generation
            // When the source is removed
            try store.removeSource(name: "acme")
            #expect(store.catalogChanges.generation > generation)
        }
    }
}
