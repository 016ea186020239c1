import Foundation
@testable import OfflineEngine
import OfflineTestSupport
import Testing

@Suite("Sync commands: one at a time, asks made meanwhile run once")
struct SyncRequestTests {
    @Test("Asks while a round runs make the next round; every source covers the named ones")
    func rounds() {
        var requests = SyncRequests()
        // Each step: an ask (whether it must start the runner) or a round the runner takes.
        var steps: [String] = []
        func ask(_ name: String?) { steps.append("ask \(name ?? "*"): \(requests.ask(name) ? "start" : "queued")") }
        func round() { steps.append("round " + requests.nextRound().map { $0 ?? "*" }.joined(separator: ",")) }
        ask("b"); round()
        ask("b"); ask("a"); ask("b"); round()
        ask("a"); ask(nil); round()
        round()
        let stopped = !requests.running
        ask(nil)
        #expect(steps == [
            "ask b: start", "round b",  // nothing ran: the caller starts the runner
            "ask b: queued", "ask a: queued", "ask b: queued", "round a,b",  // asked during a round: one more
            "ask a: queued", "ask *: queued", "round *",  // every source covers the named ones
            "round ",  // nothing asked: the runner stops
            "ask *: start",  // and the next ask starts one again
        ])
        #expect(stopped)
    }

    @Test("Twenty sync lines during a slow sync fetch the feed twice, not twenty times")
    func slowSyncAskedAgain() throws {
        let f = try EngineFixture()
        defer { f.close() }
        f.origin.serve("/feed.json", .text("""
            {"offlinefs": 1, "items": [{"id": "ep-1", "title": "One", "type": "video", "url": "/ep-1.mp4", "size": 10}]}
            """, contentType: "application/json"))
        f.origin.setFault("/feed.json", .stallBeforeHeaders(seconds: 30))
        f.start()

        try f.perform(.sync(source: "src"))
        try waitUntil { f.origin.requests(for: "/feed.json").count == 1 }
        for _ in 0..<19 { try f.perform(.sync(source: "src")) }
        f.origin.clearFaults()
        f.origin.releaseStalls()
        try waitUntil { f.origin.requests(for: "/feed.json").count >= 2 }
        f.engine.stop()  // waits for the sync thread: a third sync would have asked by now

        #expect(f.origin.requests(for: "/feed.json").count == 2)
        #expect(try f.store.item(source: "src", contentID: "ep-1") != nil)
    }

    @Test("A sync command during a timed sync waits for it: the feed is never fetched twice at once")
    func commandDuringATimedSync() throws {
        let f = try EngineFixture { $0.periodicSync = true }
        defer { f.close() }
        f.origin.serve("/feed.json", .text("""
            {"offlinefs": 1, "items": [{"id": "ep-1", "title": "One", "type": "video", "url": "/ep-1.mp4", "size": 10}]}
            """, contentType: "application/json"))
        // The timed sync of the never-synced source, at start, hangs for a second.
        f.origin.setFault("/feed.json", .stallBeforeHeaders(seconds: 1), times: 1)
        f.start()
        try waitUntil { f.origin.requests(for: "/feed.json").count == 1 }
        try f.perform(.sync(source: "src"))
        try f.perform(.sync(source: nil))
        try waitUntil { f.origin.requests(for: "/feed.json").count == 2 }
        f.engine.stop()  // waits for the sync thread

        #expect(f.origin.requests(for: "/feed.json").count == 2)
        #expect(f.origin.mostAtOnce(for: "/feed.json") == 1)
        #expect(try f.store.item(source: "src", contentID: "ep-1") != nil)
    }
}
