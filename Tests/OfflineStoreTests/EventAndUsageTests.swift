import Foundation
import Testing
@testable import OfflineStore

@Suite("Events, state changes, usage, HLS segments")
struct EventAndUsageTests {
    @Test("Events come back in order, paged by sequence number")
    func order() throws {
        try withLibrary { store, _ throws in
            let base = try store.lastEventSeq()
            var seqs: [Int64] = []
            for i in 0..<25 {
                seqs.append(try store.appendEvent(kind: .error, itemID: Int64(i), message: "line \(i)",
                                                  details: #"{"n":\#(i)}"#))
            }
            #expect(seqs == seqs.sorted() && Set(seqs).count == 25)
            let first = try store.events(after: base, limit: 10)
            let rest = try store.events(after: first.last!.seq, limit: 100)
            #expect(first.count == 10 && rest.count == 15)
            #expect((first + rest).map(\.message) == (0..<25).map { "line \($0)" })
            #expect(first[3].details == #"{"n":3}"#)
            #expect(first[3].time == TestClock.start)
            #expect(try store.lastEventSeq() == seqs.last)
        }
    }

    @Test("setState stores state and error and logs the change; events survive item deletion")
    func stateEvents() throws {
        try withLibrary { store, _ throws in
            let source = try store.addSource(name: "s", feedURL: "https://s.example/")
            _ = try store.mergeCatalog(sourceID: source.id, title: nil, entries: [entry("m")], isComplete: true, now: TestClock.start)
            let id = try #require(try store.item(source: "s", contentID: "m")).id
            let base = try store.lastEventSeq()

            try store.setState(itemID: id, state: .queued)
            let idle = try store.setState(itemID: id, state: .idle, error: .noNetwork, detail: "could not resolve host")
            #expect(idle.state == .idle && idle.error == .noNetwork && idle.errorDetail == "could not resolve host")
            try store.setState(itemID: id, state: .idle, error: .noNetwork) // no change: no event
            let done = try store.setState(itemID: id, state: .cached)
            #expect(done.error == nil) // a success clears the error

            let events = try store.events(after: base)
            #expect(events.map(\.kind) == [.state, .state, .state])
            #expect(events.allSatisfy { $0.itemID == id && $0.sourceID == source.id })
            #expect(events[1].message.contains("queued → idle (no-network)"))

            #expect(try store.items(matching: ItemFilter(state: .cached)).map(\.item.id) == [id])
            #expect(try store.items(matching: ItemFilter(state: .queued)).isEmpty)

            try store.removeSource(name: "s")
            #expect(try store.events(after: base).count >= 3)
            #expect(throws: StoreError.self) { try store.setState(itemID: id, state: .queued) }
        }
    }

    @Test("A state change decided on an earlier read does nothing once the item moved on")
    func conditionalStateChange() throws {
        try withLibrary { store, _ throws in
            let source = try store.addSource(name: "s", feedURL: "https://s.example/")
            _ = try store.mergeCatalog(sourceID: source.id, title: nil, entries: [entry("m")], isComplete: true, now: TestClock.start)
            let id = try #require(try store.item(source: "s", contentID: "m")).id
            // Given an item the scheduler read as queued, which the user then paused
            try store.setState(itemID: id, state: .queued)
            try store.setState(itemID: id, state: .paused)
            let base = try store.lastEventSeq()
            // When the scheduler's decision to make it idle lands
            let after = try store.setState(itemID: id, state: .idle, error: .outOfPolicy, onlyFrom: .queued)
            // Then the item stays paused, and nothing is logged
            #expect(after.state == .paused && after.error == nil)
            #expect(try store.events(after: base).isEmpty)
            // And the same change from the state it expects goes through
            #expect(try store.setState(itemID: id, state: .queued, onlyFrom: .paused).state == .queued)
        }
    }

    @Test("Daily usage adds up per local calendar day")
    func usage() throws {
        try withLibrary { store, _ throws in
            let tz = try #require(TimeZone(identifier: "Europe/Paris"))
            // 23:30 UTC on 1 March is already 2 March in Paris.
            let lateUTC = Date(timeIntervalSince1970: 1_740_871_800)
            #expect(LibraryStore.dayKey(for: lateUTC, timeZone: tz) == "2025-03-02")
            try store.addUsage(bytes: 1000, day: lateUTC, timeZone: tz)
            try store.addUsage(bytes: 500, day: lateUTC.addingTimeInterval(3600), timeZone: tz)
            try store.addUsage(bytes: 7, day: lateUTC.addingTimeInterval(-86_400), timeZone: tz)
            #expect(try store.usage(day: lateUTC, timeZone: tz) == 1500)
            #expect(try store.usage(day: lateUTC.addingTimeInterval(-86_400), timeZone: tz) == 7)
            #expect(try store.usage(day: lateUTC.addingTimeInterval(86_400), timeZone: tz) == 0)
        }
    }

    @Test("HLS stream record: put, replace, read back after reopening, gone with the item's choice")
    func hls() throws {
        try withLibrary { store, folder throws in
            let source = try store.addSource(name: "s", feedURL: "https://s.example/")
            _ = try store.mergeCatalog(sourceID: source.id, title: nil,
                                       entries: [entry("live", type: .hls, mime: "application/vnd.apple.mpegurl")],
                                       isComplete: true, now: TestClock.start)
            let item = try #require(try store.item(source: "s", contentID: "live"))
            #expect(item.fileName == "Title live [live].m3u8")
            let first = HLSStreamRecord(itemID: item.id, playlistURL: "https://s.example/low.m3u8", playlist: Data("#EXTM3U\n".utf8),
                                        quality: "low", bandwidth: 100_000, resolution: "160x90", estimatedSize: 12_345,
                                        chosenAt: TestClock.start)
            try store.putHLSStream(first)
            var second = first
            second.playlistURL = "https://s.example/high.m3u8"
            second.quality = nil
            second.bandwidth = 900_000
            try store.putHLSStream(second)
            let reopened = try LibraryStore.open(folder: folder)
            defer { try? reopened.close() }
            #expect(try reopened.hlsStream(itemID: item.id) == second)
            try reopened.removeHLSStream(itemID: item.id)
            #expect(try reopened.hlsStream(itemID: item.id) == nil)
            #expect(throws: StoreError.self) { try reopened.putHLSStream(HLSStreamRecord(itemID: 999, playlistURL: "x", playlist: Data(), chosenAt: TestClock.start)) }
        }
    }

    @Test("The change token moves when a licence's expiry changes, even without an event (the mount's tree checks expiry on open)")
    func changeTokenFollowsLicences() throws {
        try withOneFilm { store, item in
            let before = try store.changeToken()
            var licence = Licence(itemID: item.id, terms: LicenceTerms(kind: .rental, rentalDuration: 60),
                                  acquiredAt: TestClock.start, expiresAt: TestClock.start.addingTimeInterval(60))
            try store.putLicence(licence)
            let acquired = try store.changeToken()
            #expect(acquired != before)
            licence.expiresAt = TestClock.start.addingTimeInterval(-1)
            try store.putLicence(licence)
            #expect(try store.changeToken() != acquired)
            #expect(try store.licenceExpiries()[item.id] == TestClock.start.addingTimeInterval(-1))
        }
    }

    @Test("The change token stays put for the note of streamed items evicted together, and moves for an item's eviction")
    func changeTokenIgnoresStreamedEvictionNotes() throws {
        try withOneFilm { store, item in
            let before = try store.changeToken()
            _ = try store.appendEvent(kind: "evict", message: "40 streamed items (5242880 bytes): evicted for cache-limit")
            #expect(try store.changeToken() == before)
            _ = try store.appendEvent(kind: "evict", itemID: item.id, sourceID: item.sourceID, message: "film.mp4: evicted for cache-limit")
            let itemEvicted = try store.changeToken()
            #expect(itemEvicted != before)
            _ = try store.appendEvent(kind: "evict", message: "2 streamed items (4096 bytes): evicted for cache-limit")
            #expect(try store.changeToken() == itemEvicted)
        }
    }

    @Test("The change token stays put for the note of a sync the origin answered 304, and moves for a merge's")
    func changeTokenIgnoresNotModifiedSyncNotes() throws {
        try withOneFilm { store, item in
            let before = try store.changeToken()
            _ = try store.appendEvent(kind: .sync, sourceID: item.sourceID, message: "synced s: not modified")
            #expect(try store.changeToken() == before)
            // (the same entry again: only the merge's event tells)
            _ = try store.mergeCatalog(sourceID: item.sourceID, title: nil, entries: [entry("film", type: .video, mime: "video/mp4")],
                                       isComplete: true, now: TestClock.start)
            #expect(try store.changeToken() != before)
        }
    }

    /// A library with one source listing one video, "film".
    private func withOneFilm(_ body: (LibraryStore, Item) throws -> Void) throws {
        try withLibrary { store, _ throws in
            let source = try store.addSource(name: "s", feedURL: "https://s.example/")
            _ = try store.mergeCatalog(sourceID: source.id, title: nil, entries: [entry("film", type: .video, mime: "video/mp4")],
                                       isComplete: true, now: TestClock.start)
            try body(store, try #require(try store.item(source: "s", contentID: "film")))
        }
    }
}
