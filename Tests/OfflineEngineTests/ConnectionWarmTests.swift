import Foundation
@testable import OfflineEngine
import OfflineHTTP
import OfflineStore
import OfflineTestSupport
import Testing

/// A listed folder opens a connection to its items' origin ahead of the first read
/// (`RangeFetcher.expectReads`, `ConnectionWarmer`).
@Suite struct ConnectionWarmTests {
    @Test func aListedItemsFirstReadGoesOutOnTheConnectionTheListingOpened() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        let size: Int64 = 1 << 20
        let item = try fixture.addItem("v.mp4", size: size, seed: 3)
        fixture.engine.startThreads()
        // When a folder holding the item is listed
        fixture.fetcher.expectReads(itemIDs: [item.id])
        // Then the origin gets one HEAD for it, and nothing is fetched or claimed
        try waitUntil { fixture.fetcher.connectionWarmUpsFinished == 1 }
        let heads = fixture.origin.requests(for: "/v.mp4")
        #expect(heads.map(\.method) == ["HEAD"], "\(heads)")
        #expect(try fixture.store.presentRanges(itemID: item.id, file: "media").isEmpty)
        // And when a reader then asks for the item's first bytes, they come on that connection
        guard case .success = fixture.fetch(item, 0..<65_536) else { Issue.record("read failed"); return }
        let requests = fixture.origin.requests(for: "/v.mp4")
        #expect(requests.map(\.method) == ["HEAD", "GET"], "\(requests)")
        #expect(requests.count == 2 && requests[1].connection == requests[0].connection, "\(requests)")
        #expect(try fixture.cachedBytes(item, 0..<65_536) == GeneratedBytes(size: size, seed: 3).bytes(in: 0..<65_536))
    }

    /// A player that closes one episode while its stream still runs, then opens the next:
    /// the stream's connection closed with it, and the next first read must not wait for a
    /// new one.
    @Test func aReadersCloseThatStopsAStreamOpensAConnectionForTheNextRead() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        let first = try fixture.addItem("one.mp4", size: 16 << 20, seed: 6)
        let next = try fixture.addItem("two.mp4", size: 1 << 20, seed: 7)
        fixture.origin.setFault("/one.mp4", .trickle(bytesPerSecond: 1 << 20))
        fixture.engine.startThreads()
        fixture.fetcher.waitForWarmUp()
        // Given a reader streaming the first item (read-ahead keeps its transfer running)
        fixture.fetcher.readerOpened(itemID: first.id)
        guard case .success = fixture.fetch(first, 0..<65_536, readAhead: 8 << 20) else { Issue.record("read failed"); return }
        // When it closes the item mid-stream
        fixture.fetcher.readerClosed(itemID: first.id)
        // Then the origin gets a HEAD for it, on a connection of its own
        try waitUntil { fixture.fetcher.connectionWarmUpsFinished == 1 }
        let firstRequests = fixture.origin.requests(for: "/one.mp4")
        #expect(firstRequests.map(\.method) == ["GET", "HEAD"], "\(firstRequests)")
        #expect(firstRequests.count == 2 && firstRequests[1].connection != firstRequests[0].connection, "\(firstRequests)")
        // And the next item's first bytes go out on that connection
        guard case .success = fixture.fetch(next, 0..<65_536) else { Issue.record("read failed"); return }
        let nextRequests = fixture.origin.requests(for: "/two.mp4")
        #expect(nextRequests.map(\.method) == ["GET"], "\(nextRequests)")
        #expect(nextRequests.first?.connection == firstRequests.last?.connection, "\(firstRequests) \(nextRequests)")
        #expect(try fixture.cachedBytes(next, 0..<65_536) == GeneratedBytes(size: 1 << 20, seed: 7).bytes(in: 0..<65_536))
    }

    @Test func itemsAlreadyReadOpenNoConnection() throws {
        let settings = FetchSettings(timeouts: TransferFixture.testSettings.timeouts, connectionWarmInterval: .zero)
        let fixture = try TransferFixture(settings: settings)
        defer { fixture.close() }
        let item = try fixture.addItem("v.mp4", size: 200_000, seed: 4)
        fixture.engine.startThreads()
        fixture.fetcher.waitForWarmUp()
        // Given an item a reader has read from
        guard case .success = fixture.fetch(item, 0..<1000) else { Issue.record("read failed"); return }
        // When its folder is listed (even with no pause between warm-ups)
        let started = fixture.fetcher.warmConnections(for: [item.id])
        // Then no HEAD goes out: its file is being read or cached, and has its own transfers
        #expect(started == 0)
        #expect(fixture.origin.requests(for: "/v.mp4").map(\.method) == ["GET"])
    }

    @Test func anOriginIsWarmedOnceInAWhile() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        origin.serve("/a.mp4", .generated(size: 1000, seed: 1, contentType: "video/mp4"))
        let loop = TransferLoop()
        loop.startThread()
        defer { loop.shutdown() }
        let warmer = ConnectionWarmer(loop: loop, interval: .seconds(3600), timeouts: TransferFixture.testSettings.timeouts)
        let first = FetchOrigin(url: origin.url("/a.mp4"), destinationPolicy: .any)
        let sameHost = FetchOrigin(url: origin.url("/b.mp4?x=1"), destinationPolicy: .any)
        // Two listings of one origin's items: one HEAD
        #expect(warmer.warm(first))
        #expect(!warmer.warm(sameHost))
        try waitUntil { warmer.finishedCount == 1 }
        #expect(origin.requests.map(\.method) == ["HEAD"])
        // Another origin (another port) gets its own
        let other = try TestOrigin()
        defer { other.stop() }
        #expect(warmer.warm(FetchOrigin(url: other.url("/c.mp4"), destinationPolicy: .any)))
        try waitUntil { warmer.finishedCount == 2 }
        #expect(other.requests.map(\.method) == ["HEAD"])
        // With no pause asked for, every listing warms again
        let eager = ConnectionWarmer(loop: loop, interval: .zero, timeouts: TransferFixture.testSettings.timeouts)
        #expect(eager.warm(first))
        #expect(eager.warm(first))
    }

    @Test func aDeadOriginChangesNothing() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        let item = try fixture.addItem("v.mp4", size: 200_000, seed: 5)
        fixture.engine.startThreads()
        fixture.origin.stop()
        // When a listed item's origin does not answer
        fixture.fetcher.expectReads(itemIDs: [item.id])
        try waitUntil { fixture.fetcher.connectionWarmUpsFinished == 1 }
        // Then the item is as it was: nothing cached, its state untouched
        #expect(try fixture.store.presentRanges(itemID: item.id, file: "media").isEmpty)
        #expect(try fixture.store.item(id: item.id)?.state == item.state)
    }

    @Test func theOriginOfAURLIsItsSchemeAndAuthority() {
        #expect(ConnectionWarmer.originKey("http://127.0.0.1:8080/a/b.mp4?x=1") == "http://127.0.0.1:8080")
        #expect(ConnectionWarmer.originKey("https://cdn.example.com") == "https://cdn.example.com")
        #expect(ConnectionWarmer.originKey("https://user@cdn.example.com?q") == "https://user@cdn.example.com")
        #expect(ConnectionWarmer.originKey("cdn.example.com/a.mp4") == nil)
        #expect(ConnectionWarmer.originKey("http:///a.mp4") == nil)
    }
}
