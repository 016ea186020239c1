import Foundation
import Testing
@testable import OfflineStore

@Suite("Cache ranges")
struct CacheRangeTests {
    /// A library with one item; returns its id.
    func withItem(_ body: (LibraryStore, Int64) throws -> Void) throws {
        try withLibrary { store, _ throws in
            let source = try store.addSource(name: "s", feedURL: "https://s.example/")
            _ = try store.mergeCatalog(sourceID: source.id, title: nil, entries: [entry("m", size: 1000)],
                                       isComplete: true, now: TestClock.start)
            try body(store, try #require(try store.item(source: "s", contentID: "m")).id)
        }
    }

    @Test("Overlapping and adjacent ranges merge; gaps stay apart")
    func merging() throws {
        try withItem { store, id throws in
            try store.addPresentRange(itemID: id, file: "media", range: 0..<100)
            try store.addPresentRange(itemID: id, file: "media", range: 200..<300)
            #expect(try store.presentRanges(itemID: id, file: "media") == [0..<100, 200..<300])

            try store.addPresentRange(itemID: id, file: "media", range: 100..<150) // adjacent to the first
            #expect(try store.presentRanges(itemID: id, file: "media") == [0..<150, 200..<300])

            try store.addPresentRange(itemID: id, file: "media", range: 120..<250) // bridges both
            #expect(try store.presentRanges(itemID: id, file: "media") == [0..<300])

            try store.addPresentRange(itemID: id, file: "media", range: 10..<20) // inside: no change
            try store.addPresentRange(itemID: id, file: "media", range: 5..<5) // empty: ignored
            #expect(try store.presentRanges(itemID: id, file: "media") == [0..<300])
            #expect(try store.bytesPresent(itemID: id) == 300)
            #expect(try store.item(id: id)?.progress == 0.3)
        }
    }

    @Test("Missing ranges and full presence of a window")
    func missing() throws {
        try withItem { store, id throws in
            try store.addPresentRange(itemID: id, file: "media", range: 100..<200)
            try store.addPresentRange(itemID: id, file: "media", range: 300..<400)
            #expect(try store.missingRanges(itemID: id, file: "media", in: 0..<500) == [0..<100, 200..<300, 400..<500])
            #expect(try store.missingRanges(itemID: id, file: "media", in: 150..<350) == [200..<300])
            #expect(try store.missingRanges(itemID: id, file: "media", in: 120..<180) == [])
            #expect(try store.isPresent(itemID: id, file: "media", range: 100..<200))
            #expect(try !store.isPresent(itemID: id, file: "media", range: 100..<201))
            #expect(try store.missingRanges(itemID: id, file: "other", in: 0..<10) == [0..<10])
        }
    }

    @Test("Side files do not count toward the item's bytes; clearing recomputes")
    func sideFiles() throws {
        try withItem { store, id throws in
            try store.addPresentRange(itemID: id, file: "media", range: 0..<400)
            try store.addPresentRange(itemID: id, file: "thumbnail", range: 0..<50)
            try store.addPresentRange(itemID: id, file: "subtitle.en", range: 0..<20)
            #expect(try store.bytesPresent(itemID: id) == 400)
            #expect(try store.bytesPresent(itemID: id, file: "thumbnail") == 50)

            try store.clearPresentRanges(itemID: id, file: "media")
            #expect(try store.bytesPresent(itemID: id) == 0)
            #expect(try store.presentRanges(itemID: id, file: "thumbnail") == [0..<50])
            try store.clearPresentRanges(itemID: id)
            #expect(try store.presentRanges(itemID: id, file: "thumbnail").isEmpty)
        }
    }

    @Test("An item is marked cached only while its media's bytes are all claimed")
    func markCachedOnlyWhileClaimed() throws {
        try withItem { store, id throws in
            // Given an item streamed whole, then evicted before its completion is recorded
            try store.addPresentRange(itemID: id, file: "media", range: 0..<1200)
            try store.clearPresentRanges(itemID: id, file: "media")
            // Then the completion changes nothing: no cached item without bytes
            #expect(try !store.markCached(itemID: id, size: 1200, at: TestClock.start))
            #expect(try store.item(id: id)?.state == .discovered)
            #expect(try store.item(id: id)?.downloadedAt == nil)
            // And with its bytes claimed, it is cached, with the origin's size
            try store.addPresentRange(itemID: id, file: "media", range: 0..<1200)
            #expect(try store.markCached(itemID: id, size: 1200, at: TestClock.start))
            let item = try #require(try store.item(id: id))
            #expect(item.state == .cached && item.size == 1200 && item.downloadedAt == TestClock.start)
        }
    }

    @Test("One record tells a file's origin, validator and ranges; nil for an unknown item")
    func cacheFileRecord() throws {
        try withItem { store, id throws in
            let validator = CacheValidator(etag: "\"v1\"", lastModified: nil, totalSize: 1000)
            try store.commitPresentRanges(itemID: id, file: "media", ranges: [0..<100, 500..<600], validator: validator)
            let record = try #require(try store.cacheFileRecord(itemID: id, file: "media"))
            #expect(record.source.mediaURL == "https://example.com/media/m.mp4")
            #expect(record.source.thumbnailURL == "https://example.com/thumb/m.jpg")
            #expect(record.source.feedURL == "https://s.example/")
            #expect(record.validator == validator)
            #expect(record.ranges == [0..<100, 500..<600])
            // Another file of the item: same source, nothing cached.
            let thumbnail = try #require(try store.cacheFileRecord(itemID: id, file: "thumbnail"))
            #expect(thumbnail.source == record.source && thumbnail.validator == nil && thumbnail.ranges.isEmpty)
            #expect(try store.cacheFileRecord(itemID: id + 1, file: "media") == nil)
            // A validator that knows nothing yet is still a validator (a version was started).
            try store.resetCache(itemID: id, file: "media", validator: CacheValidator())
            let reset = try #require(try store.cacheFileRecord(itemID: id, file: "media"))
            #expect(reset.validator == CacheValidator() && reset.ranges.isEmpty)
        }
    }

    @Test("Ranges of an unknown item are refused")
    func unknownItem() throws {
        try withLibrary { store, _ throws in
            #expect(throws: StoreError.self) { try store.addPresentRange(itemID: 42, file: "media", range: 0..<1) }
        }
    }

    @Test("Random inserts agree with a byte map")
    func randomOracle() throws {
        try withItem { store, id throws in
            var generator = SplitMix(seed: 7)
            var oracle = [Bool](repeating: false, count: 2000)
            for _ in 0..<200 {
                let start = Int64(generator.next() % 1990)
                let length = Int64(generator.next() % 40) + 1
                let end = min(2000, start + length)
                try store.addPresentRange(itemID: id, file: "media", range: start..<end)
                for i in Int(start)..<Int(end) { oracle[i] = true }
            }
            let ranges = try store.presentRanges(itemID: id, file: "media")
            var expected: [Range<Int64>] = []
            var i = 0
            while i < oracle.count {
                if oracle[i] {
                    let s = i
                    while i < oracle.count && oracle[i] { i += 1 }
                    expected.append(Int64(s)..<Int64(i))
                } else { i += 1 }
            }
            #expect(ranges == expected)
            #expect(try store.bytesPresent(itemID: id) == Int64(oracle.filter { $0 }.count))
        }
    }
}

/// A tiny seeded generator so the random test is repeatable.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
