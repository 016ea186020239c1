import Foundation
@testable import OfflineEngine
import OfflineHTTP
import OfflineStore
import OfflineTestSupport
import Testing

/// A streaming reader (one that asks `FetchSettings.streamBytes` or more at once) is served by
/// one transfer that pauses whenever it is as far ahead as the reader wants.
@Suite struct StreamingFetchTests {
    static let settings = FetchSettings(timeouts: TransferFixture.testSettings.timeouts,
                                        pausedFetchLimit: .milliseconds(100))
    static let mib: Int64 = 1 << 20

    /// Waits (bounded) until the item's fetches are as `expected` says.
    private func waitForFetches(_ fixture: TransferFixture, _ item: Item,
                                _ expected: @escaping ([(cursor: Int64, paused: Bool)]) -> Bool) -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if expected(fixture.fetcher.fetchPositions(itemID: item.id, file: "media")) { return true }
            usleep(1000)
        }
        return false
    }

    @Test func aSequentialReaderIsServedByOneTransferThatPausesAtItsReadAhead() throws {
        let fixture = try TransferFixture(settings: Self.settings)
        defer { fixture.close() }
        let size = 12 * Self.mib
        let item = try fixture.addItem("s.mp4", size: size, seed: 4)
        // Given a reader that asked for the first MiB with 1 MiB of read-ahead
        #expect(throws: Never.self) { try fixture.fetch(item, 0..<Self.mib, readAhead: Self.mib).get() }
        // Then its fetch stops where the read-ahead ends, its transfer paused
        #expect(waitForFetches(fixture, item) { $0.count == 1 && $0[0].cursor == 2 * Self.mib && $0[0].paused })
        // When it reads on, a window at a time, to the end
        var offset = Self.mib
        while offset < size {
            let end = min(size, offset + 2 * Self.mib)
            #expect(throws: Never.self) { try fixture.fetch(item, offset..<end, readAhead: Self.mib).get() }
            offset = end
        }
        // Then one request served it all, and the bytes are the origin's
        let requests = fixture.origin.requests(for: "/s.mp4")
        #expect(requests.map { $0.header("range") } == ["bytes=0-"])
        #expect(try fixture.cachedBytes(item, 0..<size) == GeneratedBytes(size: size, seed: 4).bytes(in: 0..<size))
    }

    @Test func smallReadsAskForExactlyWhatTheyNeed() throws {
        let fixture = try TransferFixture(settings: Self.settings)
        defer { fixture.close() }
        let item = try fixture.addItem("r.mp4", size: 8 * Self.mib, seed: 5)
        // When a random reader asks for 64 KiB without read-ahead
        #expect(throws: Never.self) { try fixture.fetch(item, 3 * Self.mib..<(3 * Self.mib + 65_536)).get() }
        // Then the origin is asked for just those bytes
        #expect(fixture.origin.requests(for: "/r.mp4").map { $0.header("range") } == ["bytes=3145728-3211263"])
    }

    @Test func aPausedFetchNobodyWantsEndsAfterTheLimit() throws {
        let fixture = try TransferFixture(settings: Self.settings)
        defer { fixture.close() }
        let item = try fixture.addItem("p.mp4", size: 8 * Self.mib, seed: 6)
        // Given a streaming reader that stopped after its first read
        #expect(throws: Never.self) { try fixture.fetch(item, 0..<Self.mib, readAhead: Self.mib).get() }
        // Then its paused fetch ends once it has been paused for the limit (100 ms here)
        #expect(waitForFetches(fixture, item) { $0.isEmpty })
        // And a later read past it asks the origin anew, from where the first fetch stopped (to
        // the end of the file, whose size the first answer told)
        #expect(throws: Never.self) { try fixture.fetch(item, 2 * Self.mib..<3 * Self.mib).get() }
        let ranges = fixture.origin.requests(for: "/p.mp4").map { $0.header("range") }
        #expect(ranges == ["bytes=0-", "bytes=2097152-8388607"])
        #expect(try fixture.cachedBytes(item, 0..<3 * Self.mib) == GeneratedBytes(size: 8 * Self.mib, seed: 6).bytes(in: 0..<3 * Self.mib))
    }

    @Test func aReaderSeekingFarAheadEndsThePausedFetchAndStartsAnother() throws {
        let fixture = try TransferFixture(settings: FetchSettings(timeouts: TransferFixture.testSettings.timeouts))
        defer { fixture.close() }
        let item = try fixture.addItem("f.mp4", size: 32 * Self.mib, seed: 7)
        #expect(throws: Never.self) { try fixture.fetch(item, 0..<Self.mib, readAhead: Self.mib).get() }
        #expect(waitForFetches(fixture, item) { $0.count == 1 && $0[0].paused })
        // When the reader jumps 20 MiB ahead (past `nearBytes`)
        #expect(throws: Never.self) { try fixture.fetch(item, 20 * Self.mib..<21 * Self.mib, readAhead: Self.mib).get() }
        // Then the paused fetch is gone and a new one serves the far bytes
        #expect(waitForFetches(fixture, item) { $0.count == 1 && $0[0].cursor == 22 * Self.mib })
        let ranges = fixture.origin.requests(for: "/f.mp4").map { $0.header("range") }
        #expect(ranges == ["bytes=0-", "bytes=20971520-33554431"])
        let expected = GeneratedBytes(size: 32 * Self.mib, seed: 7)
        #expect(try fixture.cachedBytes(item, 20 * Self.mib..<21 * Self.mib) == expected.bytes(in: 20 * Self.mib..<21 * Self.mib))
    }

    @Test func anOriginThatDropsAPausedConnectionIsAskedAgain() throws {
        let fixture = try TransferFixture(settings: FetchSettings(timeouts: TransferFixture.testSettings.timeouts))
        defer { fixture.close() }
        let size = 8 * Self.mib
        let item = try fixture.addItem("d.mp4", size: size, seed: 8)
        // Given an origin that closes the first connection after 3 MiB of body
        fixture.origin.setFault("/d.mp4", .truncate(afterBytes: 3 * Self.mib), times: 1)
        // And a streaming reader whose fetch paused at 2 MiB
        #expect(throws: Never.self) { try fixture.fetch(item, 0..<Self.mib, readAhead: Self.mib).get() }
        #expect(waitForFetches(fixture, item) { $0.count == 1 && $0[0].paused })
        // When it reads on past where the origin gave up
        let result = fixture.fetch(item, 2 * Self.mib..<5 * Self.mib)
        // Then it gets its bytes: a new request takes over where the first ended
        #expect(throws: Never.self) { try result.get() }
        let ranges = fixture.origin.requests(for: "/d.mp4").map { $0.header("range") }
        #expect(ranges == ["bytes=0-", "bytes=3145728-8388607"])
        #expect(try fixture.cachedBytes(item, 0..<5 * Self.mib) == GeneratedBytes(size: size, seed: 8).bytes(in: 0..<5 * Self.mib))
    }
}

/// Which staging blocks a file keeps for readers (`CachedFileState.keep`).
@Suite struct KeptBlocksTests {
    @Test func aBlockAFetchStillFillsIsKeptEvenWhenAFlushWroteAllItHeld() throws {
        let pool = StagingPool(capacity: 30)
        var state = CachedFileState()
        // Given a fetch filling its first block, all of whose 1000 bytes so far a flush wrote out
        let filling = try #require(pool.block(for: 0, generation: 0))
        filling.to = 1000
        filling.written = 1000
        state.fetches[1] = Fetch(generation: 0, start: 0, askedEnd: .max, cursor: 1000, stop: .max,
                                 allowance: .max, streams: false)
        state.fetches[1]?.block = filling
        state.keep(filling)
        // When more blocks than the file keeps arrive after it, all of them written
        for n in 1...CachedFileState.recentBlocks {
            let block = try #require(pool.block(for: Int64(n) << 20, generation: 0))
            block.to = StagingBlock.size
            block.written = StagingBlock.size
            state.keep(block)
        }
        // Then the block still being filled is kept, and its next bytes are read from memory
        #expect(state.recent.count == CachedFileState.recentBlocks)
        #expect(state.recent.contains { $0 === filling })
        filling.to = 2000
        #expect(state.bytesInMemory(1000..<2000)?.count == 1000)
    }
}
