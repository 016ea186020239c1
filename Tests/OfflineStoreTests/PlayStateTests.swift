import Foundation
import Testing
@testable import OfflineStore

/// What was played: playbacks from reads, explicit marks, and what `delete-watched-after`
/// may evict.
@Suite("Play state")
struct PlayStateTests {
    let t0 = TestClock.start

    private func oneItem(_ store: LibraryStore) throws -> Item {
        let source = try store.addSource(name: "acme", feedURL: "https://acme.example/c.json")
        _ = try store.mergeCatalog(sourceID: source.id, title: nil, entries: [entry("a")], isComplete: true, now: t0)
        return try #require(try store.item(source: "acme", contentID: "a"))
    }

    @Test func aPlaybackSetsTheResumePointAndOneThatReachesTheEndWatches() throws {
        try withLibrary { store, _ throws in
            let item = try oneItem(store)
            #expect(item.position == nil && !item.watched && item.lastPlayedAt == nil)
            #expect(try store.recordPlayback(itemID: item.id, startedAt: t0, position: 30, watched: false, at: t0 + 60))
            var now = try #require(try store.item(id: item.id))
            #expect(now.position == 30 && !now.watched && now.lastPlayedAt == t0 + 60)
            // A later playback without a position (unknown duration) keeps the resume point.
            try store.recordPlayback(itemID: item.id, startedAt: t0 + 100, position: nil, watched: false, at: t0 + 120)
            now = try #require(try store.item(id: item.id))
            #expect(now.position == 30 && now.lastPlayedAt == t0 + 120)
            try store.recordPlayback(itemID: item.id, startedAt: t0 + 200, position: 59, watched: true, at: t0 + 260)
            now = try #require(try store.item(id: item.id))
            #expect(now.watched && now.watchedAt == t0 + 260 && now.position == 0)
        }
    }

    @Test func anExplicitMarkWinsOverAPlaybackThatBeganBeforeIt() throws {
        try withLibrary { store, _ throws in
            let item = try oneItem(store)
            try store.markPlayState(itemID: item.id, position: 42, at: t0 + 10)
            // A player that opened the file before the mark, closed after it.
            #expect(try store.recordPlayback(itemID: item.id, startedAt: t0, position: 5, watched: true, at: t0 + 20) == false)
            var now = try #require(try store.item(id: item.id))
            #expect(now.position == 42 && !now.watched)
            // A playback begun after the mark counts.
            #expect(try store.recordPlayback(itemID: item.id, startedAt: t0 + 30, position: 50, watched: false, at: t0 + 40))
            now = try #require(try store.item(id: item.id))
            #expect(now.position == 50)
            try store.markPlayState(itemID: item.id, watched: true, played: true, at: t0 + 50)
            now = try #require(try store.item(id: item.id))
            #expect(now.watched && now.position == 0 && now.lastPlayedAt == t0 + 50)
            try store.markPlayState(itemID: item.id, watched: false, at: t0 + 60)
            now = try #require(try store.item(id: item.id))
            #expect(!now.watched && now.lastPlayedAt == t0 + 50)
            #expect(throws: StoreError.self) { try store.markPlayState(itemID: 9_999, watched: true, at: t0) }
        }
    }

    @Test func watchedEvictionsAreTheWatchedItemsWithBytesThatAreNotLocked() throws {
        try withLibrary { store, _ throws in
            let source = try store.addSource(name: "acme", feedURL: "https://acme.example/c.json")
            _ = try store.mergeCatalog(sourceID: source.id, title: nil, entries: ["a", "b", "c", "d"].map { entry($0) },
                                       isComplete: true, now: t0)
            func id(_ content: String) throws -> Int64 { try #require(try store.item(source: "acme", contentID: content)).id }
            for content in ["a", "b", "c"] { try store.addPresentRange(itemID: try id(content), file: "media", range: 0..<1000) }
            try store.markPlayState(itemID: try id("a"), watched: true, at: t0)
            try store.markPlayState(itemID: try id("b"), watched: true, at: t0)
            try store.setLocked(itemID: try id("b"), true)
            try store.markPlayState(itemID: try id("c"), watched: true, at: t0 + 3600)
            try store.markPlayState(itemID: try id("d"), watched: true, at: t0)  // no bytes
            let (due, next) = try store.watchedEvictions(cutoff: t0 + 60)
            #expect(due.map(\.contentID) == ["a"])
            #expect(next == t0 + 3600)
        }
    }
}
