import Foundation
@testable import OfflineEngine
import OfflineHTTP
import OfflineStore
import OfflineTestSupport
import Testing

/// The range fetch API the mount reads through (`RangeFetcher`, read by `LibraryReader`).
@Suite struct RangeFetchTests {
    @Test func overlappingConcurrentRequestsShareOneTransfer() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        let size: Int64 = 4 << 20
        let item = try fixture.addItem("v.mp4", size: size, seed: 9)
        // Given an origin slow to answer, so every request below arrives while one is in flight
        fixture.origin.setFault("/v.mp4", .latency(milliseconds: 200))
        // When 8 readers ask at once for overlapping bytes of the first MiB (the first with read-ahead)
        let results = Box<[Result<Void, FetchError>]>([])
        let done = DispatchGroup()
        let ranges: [Range<Int64>] = [0..<65_536, 1000..<50_000, 0..<1_000_000, 500_000..<600_000,
                                      65_536..<131_072, 900_000..<1_048_576, 10..<20, 300_000..<700_000]
        for (index, range) in ranges.enumerated() {
            done.enter()
            fixture.fetcher.whenAvailable(itemID: item.id, file: "media", range: ByteRange(range.lowerBound, range.upperBound),
                                          readAhead: index == 0 ? 1 << 20 : 0, deadline: .now + .seconds(10)) { result in
                results.value.append(result)
                done.leave()
            }
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        // Then every reader got its bytes from one upstream transfer
        #expect(results.value.count == ranges.count)
        #expect(results.value.allSatisfy { if case .success = $0 { true } else { false } })
        let requests = fixture.origin.requests(for: "/v.mp4")
        #expect(requests.count == 1, "\(requests)")
        // (the first reader streams, with its 1 MiB read-ahead: its fetch asks for the rest of the file)
        #expect(requests.first?.header("range") == "bytes=0-")
        for range in ranges {
            #expect(try fixture.cachedBytes(item, range) == GeneratedBytes(size: size, seed: 9).bytes(in: range))
        }
    }

    @Test func discardingManyFilesRemovesEachAndSkipsOneWithNothingToDiscard() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        let items = try (0..<3).map { try fixture.addItem("d\($0).mp4", size: 100_000, seed: UInt64($0 + 20)) }
        // Given three items fetched whole and claimed
        for item in items {
            _ = fixture.fetch(item, 0..<100_000)
            _ = try fixture.fetcher.flush(itemID: item.id, file: "media")
        }
        #expect(try fixture.store.totalBytesPresent() == 300_000)
        // When two files and one of an item that does not exist (nothing of it was ever
        // fetched, as for an item with no URL) are discarded together
        try fixture.fetcher.discard([(items[0].id, "media"), (9_999, "media"), (items[1].id, "media")])
        // Then both files' bytes are forgotten in the store and gone from the disk with their
        // folders, and the third item keeps its own
        for item in items.prefix(2) {
            #expect(try fixture.store.presentRanges(itemID: item.id, file: "media").isEmpty)
            #expect(try fixture.store.item(id: item.id)?.bytesPresent == 0)
            let path = fixture.fetcher.cacheFilePath(itemID: item.id, file: "media")
            #expect(!FileManager.default.fileExists(atPath: (path as NSString).deletingLastPathComponent))
        }
        #expect(try fixture.store.item(id: items[2].id)?.bytesPresent == 100_000)
        #expect(try fixture.committedBytesMatch(items[2], size: 100_000, seed: 22))
    }

    @Test func firstReadJoinsTheTransferTheOpenStarted() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        let size: Int64 = 1 << 20
        let item = try fixture.addItem("v.mp4", size: size, seed: 6)
        // Given an origin slow to answer, and a reader that opened the file
        fixture.origin.setFault("/v.mp4", .latency(milliseconds: 100))
        fixture.fetcher.startFirstWindow(itemID: item.id, file: "media")
        // When its first read asks for the first 64 KiB
        guard case .success = fixture.fetch(item, 0..<65_536) else { Issue.record("first read failed"); return }
        // Then the bytes came from the one transfer the open started, for exactly the first window
        let requests = fixture.origin.requests(for: "/v.mp4")
        #expect(requests.count == 1, "\(requests)")
        #expect(requests.first?.header("range") == "bytes=0-\(FetchSettings().firstWindow - 1)")
        #expect(try fixture.cachedBytes(item, 0..<65_536) == GeneratedBytes(size: size, seed: 6).bytes(in: 0..<65_536))
    }

    @Test func aReaderPastTheFirstWindowStreamsFromItsEnd() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        let size: Int64 = 4 << 20
        let item = try fixture.addItem("v.mp4", size: size, seed: 8)
        let window = FetchSettings().firstWindow
        // Given an open that started the first window
        fixture.fetcher.startFirstWindow(itemID: item.id, file: "media")
        // When a sequential reader reads 1 MiB with a 1 MiB read-ahead
        guard case .success = fixture.fetch(item, 0..<(1 << 20), readAhead: 1 << 20) else {
            Issue.record("read failed")
            return
        }
        // Then the window was asked for exactly, and the rest streams from its end in one request
        // (on a second connection: the origin may see either first). That request is open-ended,
        // or ends at the last byte when the window's answer told the size before it was planned.
        let ranges = fixture.origin.requests(for: "/v.mp4").compactMap { $0.header("range") }
        #expect(ranges.count == 2 && ranges.contains("bytes=0-\(window - 1)"), "\(ranges)")
        #expect(ranges.contains("bytes=\(window)-") || ranges.contains("bytes=\(window)-\(size - 1)"), "\(ranges)")
        #expect(try fixture.cachedBytes(item, 0..<(1 << 20)) == GeneratedBytes(size: size, seed: 8).bytes(in: 0..<(1 << 20)))
    }

    @Test func startingTheEngineOnlyPreparesTheReadPath() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        let item = try fixture.addItem("v.mp4", size: 100_000, seed: 1)
        // When the engine starts its threads (which warm up the read path) and stops
        fixture.engine.startThreads()
        fixture.engine.shutdown()  // waits for the warm-up
        // Then the cache folder and one staging block are ready for the first bytes, and
        // nothing was fetched from the origin or claimed
        var isFolder: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: fixture.fetcher.cacheFolder.path, isDirectory: &isFolder))
        #expect(isFolder.boolValue)
        #expect(fixture.fetcher.stagingBlocksAllocated == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: fixture.fetcher.cacheFolder.path).isEmpty)
        #expect(fixture.origin.requests.isEmpty)
        #expect(try fixture.store.presentRanges(itemID: item.id, file: "media").isEmpty)
        #expect(!FileManager.default.fileExists(atPath: fixture.fetcher.cacheFilePath(itemID: item.id, file: "media")))
    }

    @Test func stagingMemoryGoesBackOnceItsReadersAreDone() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        // Given twelve items from a slow origin, each opened, read a little and closed while
        // its fetch still reads ahead into a staging block of its own (a scanner going
        // through a library)
        for n in 1...12 {
            let item = try fixture.addItem("v\(n).mp4", size: 300_000, seed: UInt64(n))
            fixture.origin.setFault("/v\(n).mp4", .trickle(bytesPerSecond: 400_000))
            fixture.fetcher.readerOpened(itemID: item.id)
            guard case .success = fixture.fetch(item, 0..<4096, readAhead: 200_000) else {
                Issue.record("the read of item \(n) failed")
                return
            }
            fixture.fetcher.readerClosed(itemID: item.id)
        }
        // Then once their fetches are over, the pool keeps no more than its few free blocks
        try waitUntil { fixture.fetcher.stagingBlocksAllocated <= StagingPool.keptFree }
    }

    /// The kernel tells a close after the next open's reads (FUSE's release is
    /// asynchronous): the fetch the close stops must not take a new reader's wait with it.
    @Test func aFetchStoppedAtTheLastCloseLeavesANewReadersWaitToAnotherFetch() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        let item = try fixture.addItem("v.mp4", size: 2_000_000, seed: 1)
        let other = try fixture.addItem("w.mp4", size: 100_000, seed: 2)
        fixture.origin.setFault("/v.mp4", .trickle(bytesPerSecond: 50_000))
        // Given a reader whose read-ahead runs on, and the transfer thread held up (a
        // callback of another file's bytes that does not return yet)
        fixture.fetcher.readerOpened(itemID: item.id)
        guard case .success = fixture.fetch(item, 0..<4096, readAhead: 1_500_000) else {
            Issue.record("the first read failed")
            return
        }
        let held = DispatchSemaphore(value: 0), holding = DispatchSemaphore(value: 0)
        fixture.fetcher.whenAvailable(itemID: other.id, file: "media", range: ByteRange(0, 1000), readAhead: 0,
                                      deadline: .now + .seconds(10), bytes: { _ in holding.signal(); held.wait() },
                                      completion: { _ in holding.signal(); held.wait() })
        holding.wait()
        // When its close stops the read-ahead, and a new reader waits for bytes it would
        // have brought, before the transfer thread hears of the stop
        fixture.fetcher.readerClosed(itemID: item.id)
        fixture.fetcher.readerOpened(itemID: item.id)
        defer { fixture.fetcher.readerClosed(itemID: item.id) }
        let pending = fixture.ask(item, 1_000_000..<1_004_096)
        held.signal()
        // Then the new reader gets its bytes
        pending.answered.wait()
        guard case .success = pending.result.value else {
            Issue.record("the new reader's wait ended with \(String(describing: pending.result.value))")
            return
        }
        #expect(try fixture.cachedBytes(item, 1_000_000..<1_004_096) == GeneratedBytes(size: 2_000_000, seed: 1).bytes(in: 1_000_000..<1_004_096))
    }

    @Test func thePoolGivesBackBlocksPastTheFewItKeepsFree() {
        let pool = StagingPool(capacity: 8)
        // Given every block of the pool in use
        var blocks = (0..<8).compactMap { pool.block(for: Int64($0) << 20, generation: 0) }
        #expect(blocks.count == 8 && pool.block(for: 9 << 20, generation: 0) == nil)
        // When all of them come back, only the few it keeps free stay allocated
        blocks.removeAll()
        #expect(pool.allocatedBlocks == StagingPool.keptFree)
        // And the pool still hands out as many as its capacity
        blocks = (0..<8).compactMap { pool.block(for: Int64($0) << 20, generation: 0) }
        #expect(blocks.count == 8)
    }

    @Test func theCacheFileIsMadeByTheFirstBytes() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        let item = try fixture.addItem("v.mp4", size: 200_000, seed: 5)
        let path = fixture.fetcher.cacheFilePath(itemID: item.id, file: "media")
        // Given an origin that holds back its answer
        fixture.origin.setFault("/v.mp4", .stallBeforeHeaders(seconds: 30))
        // When a reader asks for bytes
        let pending = fixture.ask(item, 0..<1000)
        // Then no file is made while the transfer waits (nothing competes with it)
        let asked = ContinuousClock.now
        while fixture.origin.requests(for: "/v.mp4").isEmpty && ContinuousClock.now - asked < .seconds(5) { usleep(1000) }
        #expect(!FileManager.default.fileExists(atPath: path))
        // And once the origin answers, the bytes land in a new file
        fixture.origin.releaseStalls()
        #expect(pending.answered.wait(timeout: .now() + 10) == .success)
        guard case .success? = pending.result.value else { Issue.record("\(String(describing: pending.result.value))"); return }
        #expect(try fixture.cachedBytes(item, 0..<1000) == GeneratedBytes(size: 200_000, seed: 5).bytes(in: 0..<1000))
    }

    @Test func farRequestStartsItsOwnRange() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        let size: Int64 = 8 << 20
        let item = try fixture.addItem("v.mp4", size: size, seed: 4)
        // Given a whole-file download trickling from the start
        fixture.origin.setFault("/v.mp4", .trickle(bytesPerSecond: 4 << 20), times: 1)
        let download = Box<DownloadResult?>(nil)
        let finished = DispatchSemaphore(value: 0)
        Thread { download.value = fixture.download(item); finished.signal() }.start()
        while fixture.origin.requests(for: "/v.mp4").isEmpty { usleep(1000) }
        // When a reader seeks far ahead
        let far: Range<Int64> = (6 << 20)..<((6 << 20) + 100_000)
        let started = ContinuousClock.now
        let result = fixture.fetch(item, far, timeout: .seconds(5))
        // Then it is answered by a range of its own, long before the download gets there
        guard case .success = result else { Issue.record("far read failed: \(result)"); return }
        #expect(ContinuousClock.now - started < .seconds(2))
        let requests = fixture.origin.requests(for: "/v.mp4")
        #expect(requests.count == 2)
        // (open-ended when the first answer's head, with the size, had not arrived yet)
        #expect(["bytes=\(6 << 20)-\(size - 1)", "bytes=\(6 << 20)-"].contains(requests.last?.header("range")))
        #expect(try fixture.cachedBytes(item, far) == GeneratedBytes(size: size, seed: 4).bytes(in: far))
        // And the download completes from both transfers, without fetching bytes twice
        #expect(finished.wait(timeout: .now() + 20) == .success)
        #expect(download.value?.state == .cached, "\(String(describing: download.value))")
        #expect(fixture.origin.bodyBytesSent(for: "/v.mp4") < size + (1 << 20))
    }

    @Test func readersGetBytesBeforeTheFlush() throws {
        // Given a fetcher that would flush only after a minute
        let fixture = try TransferFixture(settings: FetchSettings(
            timeouts: TransferFixture.testSettings.timeouts, flushBytes: 1 << 40, flushInterval: .seconds(60)))
        defer { fixture.close() }
        let item = try fixture.addItem("v.mp4", size: 1 << 20, seed: 8)
        // When a reader asks for bytes
        let result = fixture.fetch(item, 0..<200_000)
        // Then it has them (readable in the cache file) while the store claims nothing yet
        guard case .success = result else { Issue.record("\(result)"); return }
        #expect(fixture.fetcher.isAvailable(itemID: item.id, file: "media", range: ByteRange(0, 200_000)))
        #expect(try fixture.cachedBytes(item, 0..<200_000) == GeneratedBytes(size: 1 << 20, seed: 8).bytes(in: 0..<200_000))
        #expect(try fixture.store.presentRanges(itemID: item.id, file: "media").isEmpty)
        // And once flushed, the store claims exactly what was written
        let durable = try fixture.fetcher.flush(itemID: item.id, file: "media")
        #expect(durable == nil)  // not the whole file
        let claimed = try fixture.store.presentRanges(itemID: item.id, file: "media")
        #expect(claimed.count == 1 && claimed[0].lowerBound == 0 && claimed[0].upperBound >= 200_000)
    }

    @Test func cachedBytesNeedNoRequest() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        let item = try fixture.addItem("v.mp4", size: 300_000, seed: 2)
        #expect(fixture.download(item).state == .cached)
        fixture.origin.clearLog()
        try fixture.restartEngine()
        // After a restart the committed bytes are available at once, from memory
        #expect(fixture.fetcher.isAvailable(itemID: item.id, file: "media", range: ByteRange(0, 300_000)))
        guard case .success = fixture.fetch(item, 1000..<250_000) else { Issue.record("cached read failed"); return }
        #expect(fixture.origin.requests.isEmpty)
    }

    @Test func deadlineBoundsAWait() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        let item = try fixture.addItem("v.mp4", size: 100_000, seed: 2)
        fixture.origin.setFault("/v.mp4", .stallBeforeHeaders(seconds: 30))
        let started = ContinuousClock.now
        let result = fixture.fetch(item, 0..<1000, timeout: .milliseconds(200))
        #expect(ContinuousClock.now - started < .seconds(1))
        guard case .failure(let error) = result else { Issue.record("expected a timeout"); return }
        #expect(error.code == .timedOut)
        fixture.origin.releaseStalls()
    }

    @Test func cancelledTicketCompletesAtOnce() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        let item = try fixture.addItem("v.mp4", size: 100_000, seed: 2)
        fixture.origin.setFault("/v.mp4", .stallBeforeHeaders(seconds: 30))
        let pending = fixture.ask(item, 0..<10)
        pending.ticket?.cancel()
        #expect(pending.answered.wait(timeout: .now() + 1) == .success)
        if case .failure(let error)? = pending.result.value { #expect(error.code == .cancelled) } else { Issue.record("not cancelled") }
        fixture.origin.releaseStalls()
    }

    @Test func unknownItemIsNoSuchItem() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        let result = fixture.fetch(try fixture.addItem("v.mp4", size: 10, seed: 1), 0..<10)
        guard case .success = result else { Issue.record("\(result)"); return }
        let done = DispatchSemaphore(value: 0)
        let error = Box<FetchError?>(nil)
        fixture.fetcher.whenAvailable(itemID: 9999, file: "media", range: ByteRange(0, 1), readAhead: 0,
                                      deadline: .now + .seconds(1)) { result in
            if case .failure(let e) = result { error.value = e }
            done.signal()
        }
        done.wait()
        #expect(error.value?.code == .noSuchItem)
    }
}
