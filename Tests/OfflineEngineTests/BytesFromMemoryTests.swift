import Foundation
import OfflineEngine
import OfflineHTTP
import OfflineStore
import OfflineTestSupport
import Testing

/// Readers answered from the bytes as they arrive, before the cache file holds them
/// (`RangeFetcher.whenAvailable(…bytes:completion:)`).
@Suite struct BytesFromMemoryTests {
    /// What one wait ended with: the bytes handed from memory, or the completion's result.
    private enum Answer {
        case bytes([UInt8], inCacheFile: Bool)
        case completion(Result<Void, FetchError>)
    }

    /// Settings under which gathered bytes reach the cache file only when their block fills or
    /// a flush is asked for. With the default timed flush (100 ms after the previous piece,
    /// the trickle's own pace) the flusher can write the last piece between its arrival and
    /// the reader's answer, so "answered before written" failed now and then under load.
    private static let noTimedFlush = FetchSettings(timeouts: TransferFixture.testSettings.timeouts,
                                                    flushBytes: 1 << 40, flushInterval: .seconds(60))

    /// Asks for `range` of `item`, taking bytes from memory; waits (bounded) for the first
    /// answer. The box collects any later one too.
    private func ask(_ fixture: TransferFixture, _ item: Item, _ range: Range<Int64>,
                     deadline: Duration = .seconds(10)) -> Box<[Answer]> {
        let answers = Box<[Answer]>([])
        let answered = DispatchSemaphore(value: 0)
        let fetcher = fixture.fetcher
        fetcher.whenAvailable(itemID: item.id, file: "media", range: ByteRange(range.lowerBound, range.upperBound),
                              readAhead: 0, deadline: .now + deadline,
                              bytes: { inMemory in
                                  let inFile = fetcher.isAvailable(itemID: item.id, file: "media",
                                                                   range: ByteRange(range.lowerBound, range.upperBound))
                                  answers.value.append(.bytes(inMemory.withBuffers { $0.flatMap { Array($0) } }, inCacheFile: inFile))
                                  answered.signal()
                              },
                              completion: { result in
                                  answers.value.append(.completion(result))
                                  answered.signal()
                              })
        _ = answered.wait(timeout: .now() + 10)
        return answers
    }

    @Test func aReadOfMissingBytesIsAnsweredBeforeTheyAreWritten() throws {
        let fixture = try TransferFixture(settings: Self.noTimedFlush)
        defer { fixture.close() }
        let size: Int64 = 1 << 20
        let item = try fixture.addItem("v.mp4", size: size, seed: 3)
        let expected = GeneratedBytes(size: size, seed: 3)
        // Given an uncached file, when a reader asks for its first 64 KiB, taking bytes from memory
        let answers = ask(fixture, item, 0..<65_536).value
        // Then it gets the origin's bytes once, handed over before they were in the cache file
        guard answers.count == 1, case .bytes(let bytes, let inCacheFile) = answers[0] else {
            Issue.record("answers: \(answers)")
            return
        }
        #expect(Data(bytes) == expected.bytes(in: 0..<65_536))
        #expect(!inCacheFile)
        // And the bytes still reach the cache file and the store's claims (a plain wait ends
        // once they are written, which may be after the early answer)
        #expect(throws: Never.self) { try fixture.fetch(item, 0..<65_536).get() }
        #expect(try fixture.fetcher.flush(itemID: item.id, file: "media") == nil)
        #expect(try fixture.cachedBytes(item, 0..<65_536) == expected.bytes(in: 0..<65_536))
        #expect(try fixture.store.presentRanges(itemID: item.id, file: "media").first?.lowerBound == 0)
        #expect(try fixture.committedBytesMatch(item, size: size, seed: 3))
    }

    @Test func aReadArrivingInPiecesIsAnsweredFromThem() throws {
        let fixture = try TransferFixture(settings: Self.noTimedFlush)
        defer { fixture.close() }
        let size: Int64 = 1 << 20
        let item = try fixture.addItem("v.mp4", size: size, seed: 7)
        // Given an origin that sends the body in pieces of 40,000 bytes
        fixture.origin.setFault("/v.mp4", .trickle(bytesPerSecond: 400_000))
        // When a reader asks for the first 100,000 bytes, taking bytes from memory
        let answers = ask(fixture, item, 0..<100_000).value
        // Then it gets them once, put together from the pieces before the last one was written
        guard answers.count == 1, case .bytes(let bytes, let inCacheFile) = answers[0] else {
            Issue.record("answers: \(answers)")
            return
        }
        #expect(Data(bytes) == GeneratedBytes(size: size, seed: 7).bytes(in: 0..<100_000))
        #expect(!inCacheFile)
    }

    @Test func aVersionChangeWhileBytesArriveGivesOnlyNewBytes() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        let size: Int64 = 16 << 20
        let item = try fixture.addItem("v.mp4", size: size, seed: 1, withChecksum: false)
        // Given a reader whose bytes arrive slowly, the first pieces already here
        fixture.origin.setFault("/v.mp4", .trickle(bytesPerSecond: 400_000))
        let box = Box<[Answer]>([])
        let answered = DispatchSemaphore(value: 0)
        fixture.fetcher.whenAvailable(itemID: item.id, file: "media", range: ByteRange(0, 200_000), readAhead: 0,
                                      deadline: .now + .seconds(20),
                                      bytes: { inMemory in
                                          box.value.append(.bytes(inMemory.withBuffers { $0.flatMap { Array($0) } }, inCacheFile: false))
                                          answered.signal()
                                      },
                                      completion: { box.value.append(.completion($0)); answered.signal() })
        let asked = ContinuousClock.now
        while fixture.fetcher.progress(itemID: item.id, file: "media").written < 40_000 && ContinuousClock.now - asked < .seconds(5) {
            usleep(1000)
        }
        // When the origin's file changes, and a seek far ahead sees the new version first
        fixture.origin.changeContent("/v.mp4", Resource(.generated(size: size, seed: 2)))
        guard case .success = fixture.fetch(item, (8 << 20)..<((8 << 20) + 1000)) else { Issue.record("seek failed"); return }
        // Then the reader's answer is all of the new version, never a mix
        #expect(answered.wait(timeout: .now() + 20) == .success)
        let expected = GeneratedBytes(size: size, seed: 2).bytes(in: 0..<200_000)
        switch box.value.first {
        case .bytes(let bytes, _)?: #expect(Data(bytes) == expected)
        case .completion(.success)?: #expect(try fixture.cachedBytes(item, 0..<200_000) == expected)
        default: Issue.record("answers: \(box.value)")
        }
        #expect(box.value.count == 1)
    }

    @Test func aReadPastTheEndGetsTheBytesUpToIt() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        let item = try fixture.addItem("v.mp4", size: 10_000, seed: 4)
        // Given a file whose size the engine learnt from a first read
        guard case .success = fixture.fetch(item, 0..<10) else { Issue.record("first read failed"); return }
        // When a reader asks for bytes past its end, where nothing is cached yet
        let answers = ask(fixture, item, 9_000..<20_000).value
        // Then it gets the bytes up to the end
        guard answers.count == 1 else { Issue.record("answers: \(answers)"); return }
        let got: [UInt8]
        switch answers[0] {
        case .bytes(let bytes, _): got = bytes
        case .completion(.success): got = try [UInt8](fixture.cachedBytes(item, 9_000..<10_000))
        case .completion(.failure(let error)): Issue.record("\(error)"); return
        }
        #expect(Data(got) == GeneratedBytes(size: 10_000, seed: 4).bytes(in: 9_000..<10_000))
    }

    @Test func aReadWhoseFirstBytesArrivedBeforeItAskedIsAnsweredFromMemory() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        let size: Int64 = 1 << 20
        let item = try fixture.addItem("v.mp4", size: size, seed: 8)
        // Given an origin that sends the body in pieces of 40,000 bytes, and a stream under way
        // whose first bytes have arrived
        fixture.origin.setFault("/v.mp4", .trickle(bytesPerSecond: 400_000))
        fixture.fetcher.whenAvailable(itemID: item.id, file: "media", range: ByteRange(0, 1000), readAhead: 200_000,
                                      deadline: .now + .seconds(10)) { _ in }
        let asked = ContinuousClock.now
        while fixture.fetcher.bytesInMemory(itemID: item.id, file: "media", range: ByteRange(0, 20_000)) == nil,
              ContinuousClock.now - asked < .seconds(5) {
            usleep(1000)
        }
        // When a reader asks for bytes from there to some that have not arrived yet (a reader at
        // the edge of the stream)
        let answers = ask(fixture, item, 10_000..<150_000).value
        // Then it gets them once, from memory, as the origin sent them
        guard answers.count == 1, case .bytes(let bytes, _) = answers[0] else {
            Issue.record("answers: \(answers)")
            return
        }
        #expect(Data(bytes) == GeneratedBytes(size: size, seed: 8).bytes(in: 10_000..<150_000))
    }

    @Test func bytesPartlyOnlyInTheCacheFileAreReadFromIt() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        let size: Int64 = 200_000
        let item = try fixture.addItem("v.mp4", size: size, seed: 5)
        // Given the first 50,000 bytes in the cache file and no longer in memory (the last
        // reader of the item closed)
        fixture.fetcher.readerOpened(itemID: item.id)
        guard case .success = fixture.fetch(item, 0..<50_000) else { Issue.record("first read failed"); return }
        fixture.fetcher.readerClosed(itemID: item.id)
        #expect(fixture.fetcher.bytesInMemory(itemID: item.id, file: "media", range: ByteRange(0, 1000)) == nil)
        // When a reader asks for bytes on both sides of their end
        let answers = ask(fixture, item, 40_000..<60_000).value
        // Then it is told to read them from the cache file (never bytes of two sources), and they are right
        guard answers.count == 1, case .completion(.success) = answers[0] else { Issue.record("answers: \(answers)"); return }
        #expect(try fixture.cachedBytes(item, 40_000..<60_000) == GeneratedBytes(size: size, seed: 5).bytes(in: 40_000..<60_000))
    }

    @Test func aReaderThatStoppedWaitingGetsNoBytesLater() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        let item = try fixture.addItem("v.mp4", size: 100_000, seed: 6)
        // Given an origin that holds back its answer
        fixture.origin.setFault("/v.mp4", .stallBeforeHeaders(seconds: 30), times: 1)
        // When a reader's deadline passes before the bytes come, and then they come
        let box = ask(fixture, item, 0..<1000, deadline: .milliseconds(200))
        fixture.origin.releaseStalls()
        guard case .success = fixture.fetch(item, 0..<100_000) else { Issue.record("later read failed"); return }
        let answers = box.value
        // Then it was answered once, with the timeout, and never with the bytes
        guard answers.count == 1, case .completion(.failure(let error)) = answers[0] else {
            Issue.record("answers: \(answers)")
            return
        }
        #expect(error.code == .timedOut)
    }
}
