import Foundation
@testable import OfflineEngine
import OfflineHTTP
@testable import OfflineStore
import Testing

/// `MediaOriginIndex` against a made-up store read: when its entries answer, and when it
/// reads again.
@Suite struct MediaOriginReloadTests {
    /// A store read that lists `rows` and counts its calls; `during` runs inside it.
    private final class FakeRead: @unchecked Sendable {
        // @unchecked: tests change `rows` and `during` only while no read runs.
        var rows: [(Int64, String)] = [(1, "http://127.0.0.1/a"), (2, "https://cdn.example/b")]
        var during: () -> Void = {}
        var fails = false
        private let lock = NSLock()
        private var count = 0
        var calls: Int { lock.withLock { count } }

        func read(_ body: (Int64, String, String) -> Void) throws {
            lock.withLock { count += 1 }
            during()
            if fails { throw StoreError(.databaseError, "made-up failure") }
            for (id, url) in rows { body(id, url, url) }
        }
    }

    /// The item's origin once the read a look-up started has landed, if the store was read
    /// `count` times by then.
    private func waitForReads(_ fake: FakeRead, _ count: Int, index: MediaOriginIndex, itemID: Int64) -> FetchOrigin? {
        index.waitForBackgroundRead()
        return fake.calls == count ? index.origin(itemID: itemID) : nil
    }

    @Test func everyURLComesBackWholeFromTheTable() {
        // Given URLs that share starts of every length with the one before, some shorter,
        // across several restarts of the table's shared-start coding
        var table = MediaOriginIndex.Table()
        let urls = (0..<100).map { n in
            n % 7 == 3 ? "http://h/\(n)" : "https://cdn.example/shows/" + String(repeating: "x", count: n % 5) + "/\(n % 13).mp4"
        }
        for (n, url) in urls.enumerated() { table.append(itemID: Int64(n * 2 + 1), url: url, anyDestination: n % 2 == 0) }
        // Then each item's URL and policy come back, and an id not listed finds nothing
        for (n, url) in urls.enumerated() {
            let origin = table.origin(itemID: Int64(n * 2 + 1))
            #expect(origin?.url == url)
            #expect(origin?.destinationPolicy == (n % 2 == 0 ? .any : .publicOnly))
        }
        #expect(table.origin(itemID: 2) == nil)
    }

    @Test func entriesAnswerUntilTheCatalogChanges() throws {
        let changes = CatalogChanges()
        let fake = FakeRead()
        let index = MediaOriginIndex(changes: changes, read: { try fake.read($0) })
        // Before any read, nothing answers, and the look-up starts a read
        #expect(index.origin(itemID: 1) == nil)
        index.waitForBackgroundRead()
        #expect(fake.calls == 1)
        // Once read, the entries answer, with each source's destination policy
        #expect(index.origin(itemID: 1) == FetchOrigin(url: "http://127.0.0.1/a", destinationPolicy: .any))
        #expect(index.origin(itemID: 2) == FetchOrigin(url: "https://cdn.example/b", destinationPolicy: .publicOnly))
        #expect(index.origin(itemID: 3) == nil)
        // When the catalog changes (an item's media moved), the old entry no longer answers
        fake.rows = [(1, "http://127.0.0.1/moved")]
        changes.bump()
        #expect(index.origin(itemID: 1) == nil)
        // And a new read in the background brings the new one
        #expect(waitForReads(fake, 2, index: index, itemID: 1)?.url == "http://127.0.0.1/moved")
        #expect(index.origin(itemID: 2) == nil)
    }

    @Test func theEnginesLoadJoinsALookUpsReadUnderWay() throws {
        let changes = CatalogChanges()
        let fake = FakeRead()
        let index = MediaOriginIndex(changes: changes, read: { try fake.read($0) })
        // Given a look-up's read under way when the engine's start loads the index
        let reading = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        fake.during = { fake.during = {}; reading.signal(); release.wait() }
        #expect(index.origin(itemID: 1) == nil)
        reading.wait()
        let loaded = DispatchSemaphore(value: 0)
        Thread { index.load(); loaded.signal() }.start()
        // Then the load waits for that read rather than reading beside it
        let waited = loaded.wait(timeout: .now() + 0.2)
        #expect(waited == .timedOut)
        release.signal()
        if waited == .timedOut { loaded.wait() }
        #expect(fake.calls == 1)
        #expect(index.origin(itemID: 1)?.url == "http://127.0.0.1/a")
    }

    @Test func aReadTheCatalogOutdatedAnswersNothingAndIsReadAgain() throws {
        let changes = CatalogChanges()
        let fake = FakeRead()
        let index = MediaOriginIndex(changes: changes, read: { try fake.read($0) })
        // Given a catalog change while the first read runs
        fake.during = { changes.bump(); fake.during = {} }
        index.load()
        // Then what it read does not answer, and the next look-up reads again
        #expect(index.origin(itemID: 1) == nil)
        #expect(waitForReads(fake, 2, index: index, itemID: 1)?.url == "http://127.0.0.1/a")
    }

    @Test func aFailedReadIsTriedAgainOnlyAfterACatalogChange() throws {
        let changes = CatalogChanges()
        let fake = FakeRead()
        fake.fails = true
        let index = MediaOriginIndex(changes: changes, read: { try fake.read($0) })
        // Given a first read that failed
        index.load()
        // When look-ups follow, the catalog unchanged
        for _ in 0..<5 { #expect(index.origin(itemID: 1) == nil) }
        // Then no read is tried again
        #expect(fake.calls == 1)
        // When the catalog changes, the next look-up reads again
        fake.fails = false
        changes.bump()
        #expect(index.origin(itemID: 1) == nil)
        #expect(waitForReads(fake, 2, index: index, itemID: 1)?.url == "http://127.0.0.1/a")
    }

    @Test func itemsForgottenPastTheLimitMakeItReadAgainWhileTheTableAnswers() throws {
        let changes = CatalogChanges()
        let fake = FakeRead()
        fake.rows = (1...5000).map { (Int64($0), "https://cdn.example/\($0).mp4") }
        let index = MediaOriginIndex(changes: changes, read: { try fake.read($0) })
        index.load()
        let limit = MediaOriginIndex.maxForgotten(entries: 5000)
        #expect(limit == 4096)
        // Given as many items forgotten as it keeps: they answer nothing, the others still answer
        for id in 1...Int64(limit) { index.forget(itemID: id) }
        #expect(index.origin(itemID: 1) == nil)
        #expect(index.origin(itemID: 5000)?.url == "https://cdn.example/5000.mp4")
        #expect(fake.calls == 1)
        // When one more is forgotten, and another while the next read runs
        let reading = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let anotherRead = DispatchSemaphore(value: 0)
        fake.during = {
            fake.during = { anotherRead.signal() }
            index.forget(itemID: 4999)
            reading.signal()
            release.wait()
        }
        index.forget(itemID: 4097)
        // Then the next look-up reads the store again, and the old table answers meanwhile
        #expect(index.origin(itemID: 5000)?.url == "https://cdn.example/5000.mp4")
        reading.wait()
        #expect(index.origin(itemID: 4998)?.url == "https://cdn.example/4998.mp4")
        #expect(index.origin(itemID: 4097) == nil)
        release.signal()
        // And the new read answers for the items forgotten before it, not for the one
        // forgotten while it ran (its bytes may have come after the read passed it)
        #expect(waitForReads(fake, 2, index: index, itemID: 1)?.url == "https://cdn.example/1.mp4")
        #expect(index.origin(itemID: 4097)?.url == "https://cdn.example/4097.mp4")
        #expect(index.origin(itemID: 4999) == nil)
        // And the new table is not outgrown: look-ups start no other read (the one forgotten
        // meanwhile had made the old set pass the limit again)
        for id in 1...Int64(10) { _ = index.origin(itemID: id) }
        #expect(anotherRead.wait(timeout: .now() + 0.5) == .timedOut)
        #expect(fake.calls == 2)
    }
}
