import Foundation
import OfflineEngine
import OfflineHTTP
import OfflineStore
import OfflineTestSupport
import Testing

/// Arriving bytes gather in 1 MiB staging blocks, go to the cache file past the page cache
/// (`O_DIRECT`) when a block fills, and stay in memory a while for readers (`StagingBlock`).
@Suite struct StagedWritesTests {
    /// The bytes of `range` if they are still in memory.
    private func bytesInMemory(_ fixture: TransferFixture, _ item: Item, _ range: Range<Int64>) -> [UInt8]? {
        fixture.fetcher.bytesInMemory(itemID: item.id, file: "media", range: ByteRange(range.lowerBound, range.upperBound))?
            .withBuffers { pieces in pieces.flatMap { Array($0) } }
    }

    /// Fetches each range in turn (waiting for it), then flushes; false after recording why not.
    private func fetchAndFlush(_ fixture: TransferFixture, _ item: Item, _ ranges: [Range<Int64>]) throws -> Bool {
        for range in ranges {
            guard case .success = fixture.fetch(item, range) else {
                Issue.record("the fetch of \(range) failed")
                return false
            }
        }
        _ = try fixture.fetcher.flush(itemID: item.id, file: "media")
        return true
    }

    @Test func bytesReachTheFileWhereverTheirFetchesStartAndEnd() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        let size: Int64 = (3 << 20) + 777
        let item = try fixture.addItem("v.mp4", size: size, seed: 31)
        // Given fetches that start and end inside pages and blocks
        guard try fetchAndFlush(fixture, item, [12_345..<2_500_001, 3_000_000..<3_100_003, 0..<size]) else { return }
        // Then the file holds every byte, claimed, as the origin has it
        #expect(try fixture.store.presentRanges(itemID: item.id, file: "media") == [0..<size])
        #expect(try fixture.cachedBytes(item, 0..<size) == GeneratedBytes(size: size, seed: 31).bytes(in: 0..<size))
    }

    @Test func bytesThatJustArrivedAreReadFromMemoryUntilTheLastReaderCloses() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        let size: Int64 = 3 << 20
        let item = try fixture.addItem("v.mp4", size: size, seed: 32)
        let expected = GeneratedBytes(size: size, seed: 32)
        fixture.fetcher.readerOpened(itemID: item.id)
        // Given a reader's bytes that just arrived
        guard case .success = fixture.fetch(item, 0..<(2 << 20)) else {
            Issue.record("the fetch failed")
            return
        }
        // Then a read across two blocks is answered from memory with the origin's bytes
        let across: Range<Int64> = 100..<1_500_000
        #expect(bytesInMemory(fixture, item, across) == Array(expected.bytes(in: across)))
        // And bytes that have not arrived are not
        #expect(bytesInMemory(fixture, item, (2 << 20)..<((2 << 20) + 10)) == nil)
        // And once the last reader closes the item, the memory goes (the file has the bytes)
        fixture.fetcher.readerClosed(itemID: item.id)
        #expect(bytesInMemory(fixture, item, across) == nil)
        #expect(try fixture.cachedBytes(item, across) == expected.bytes(in: across))
    }

    @Test(.enabled(if: PageCache.canDropPages(of: FileManager.default.temporaryDirectory.path)))
    func wholeBlocksGoToTheFilePastThePageCache() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        let size: Int64 = 4 << 20
        // (No checksum: verifying one reads the file back into the page cache.)
        let item = try fixture.addItem("v.mp4", size: size, seed: 33, withChecksum: false)
        let path = fixture.fetcher.cacheFilePath(itemID: item.id, file: "media")
        // Given a reader (so completion lets go of nothing) and a file of whole blocks
        fixture.fetcher.readerOpened(itemID: item.id)
        defer { fixture.fetcher.readerClosed(itemID: item.id) }
        guard try fetchAndFlush(fixture, item, [0..<size]) else { return }
        // Then none of its pages went through the page cache, and the disk has every byte
        #expect(try PageCache.residentBytes(of: path) == 0)
        #expect(try fixture.committedBytesMatch(item, size: size, seed: 33))
    }

    @Test func aSlowOriginsBytesReachAWaitingReaderBeforeTheirBlockFills() throws {
        // Stalls end a transfer only after 30 s here: the read must not wait for that.
        var settings = TransferFixture.testSettings
        settings.timeouts = HTTPTimeouts(connect: 2, lowSpeedBytesPerSecond: 1, lowSpeedSeconds: 30)
        let fixture = try TransferFixture(settings: settings)
        defer { fixture.close() }
        let item = try fixture.addItem("v.mp4", size: 2 << 20, seed: 34)
        // Given an origin that sends 200 KB a second (a block fills in 5 s)
        fixture.origin.setFault("/v.mp4", .trickle(bytesPerSecond: 200_000))
        // When a reader waits for its first 50 KB, with 3 s to spare
        let started = ContinuousClock.now
        let result = fixture.fetch(item, 0..<50_000, timeout: .seconds(3))
        // Then it has them, as the origin sent them
        guard case .success = result else {
            Issue.record("the read failed after \(ContinuousClock.now - started): \(result)")
            return
        }
        #expect(try fixture.cachedBytes(item, 0..<50_000) == GeneratedBytes(size: 2 << 20, seed: 34).bytes(in: 0..<50_000))
        fixture.origin.releaseStalls()
    }

    @Test func withEveryBlockHeldByAnotherFileBytesAreWrittenAsTheyCome() throws {
        // One block engine-wide, kept for a reader of another item.
        var settings = TransferFixture.testSettings
        settings.stagingBlocks = 1
        let fixture = try TransferFixture(settings: settings)
        defer { fixture.close() }
        let other = try fixture.addItem("o.mp4", size: 1 << 20, seed: 34)
        fixture.fetcher.readerOpened(itemID: other.id)
        defer { fixture.fetcher.readerClosed(itemID: other.id) }
        guard try fetchAndFlush(fixture, other, [0..<100_000]) else { return }
        // When an item finds no block free and none of its own on the way to the disk
        let size: Int64 = (4 << 20) + 5
        let item = try fixture.addItem("v.mp4", size: size, seed: 35)
        fixture.fetcher.readerOpened(itemID: item.id)
        defer { fixture.fetcher.readerClosed(itemID: item.id) }
        guard try fetchAndFlush(fixture, item, [0..<size]) else { return }
        // Then its bytes went to the file the plain way, every one of them
        #expect(try fixture.store.presentRanges(itemID: item.id, file: "media") == [0..<size])
        #expect(try fixture.committedBytesMatch(item, size: size, seed: 35))
    }

    @Test func aFetchOutOfBlocksWaitsForItsOwnWritesAndLosesNothing() throws {
        // Two blocks engine-wide: a streaming fetch fills both long before the disk has the first.
        var settings = TransferFixture.testSettings
        settings.stagingBlocks = 2
        let fixture = try TransferFixture(settings: settings)
        defer { fixture.close() }
        let size: Int64 = (24 << 20) + 5
        let item = try fixture.addItem("w.mp4", size: size, seed: 36)
        fixture.fetcher.readerOpened(itemID: item.id)
        defer { fixture.fetcher.readerClosed(itemID: item.id) }
        // When a reader reads it all in 1 MiB reads with 4 MiB of read-ahead
        var offset: Int64 = 0
        while offset < size {
            let end = min(size, offset + (1 << 20))
            guard case .success = fixture.fetch(item, offset..<end, readAhead: 4 << 20) else {
                Issue.record("the read of \(offset)..<\(end) failed")
                return
            }
            offset = end
        }
        _ = try fixture.fetcher.flush(itemID: item.id, file: "media")
        // Then one request served it (its transfer waited for the disk instead of failing) and
        // every byte is in the file
        #expect(fixture.origin.requests(for: "/w.mp4").count == 1)
        #expect(try fixture.store.presentRanges(itemID: item.id, file: "media") == [0..<size])
        #expect(try fixture.committedBytesMatch(item, size: size, seed: 36))
    }
}
