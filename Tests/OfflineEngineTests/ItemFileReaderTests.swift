import Foundation
import OfflineEngine
import OfflineHTTP
import OfflineStore
import OfflineTestSupport
import Testing

/// The engine's side of an open item file (`LibraryReader`, `ItemFileReader`): a read gets
/// exactly one answer, whichever way it ends.
@Suite struct ItemFileReaderTests {
    private func reading(_ fixture: TransferFixture, readTimeout: Duration = .seconds(10)) -> LibraryReader {
        LibraryReader(fetcher: fixture.fetcher, view: LibraryView(store: fixture.store), readTimeout: readTimeout)
    }

    /// Reads `count` bytes at `offset`, collecting every answer; waits (bounded) for the first.
    private func read(_ reader: ItemFileReader, at offset: Int64, count: Int,
                      onWait: ((ReadCancellation) -> Void)? = nil) -> Box<[ReadAnswer]> {
        let answers = Box<[ReadAnswer]>([])
        let answered = DispatchSemaphore(value: 0)
        reader.read(offset: offset, count: count, onWait: onWait) { answer in
            answers.value.append(answer)
            answered.signal()
        }
        _ = answered.wait(timeout: .now() + 15)
        return answers
    }

    /// The bytes an answer carries (a region is read from its descriptor).
    private func bytes(of answer: ReadAnswer) -> [UInt8]? {
        switch answer {
        case .bytes(let bytes): return bytes
        case .memory(let inMemory): return inMemory.withBuffers { $0.flatMap { Array($0) } }
        case .cacheFile(let region):
            var buffer = [UInt8](repeating: 0, count: region.count)
            let got = buffer.withUnsafeMutableBytes { pread(region.descriptor, $0.baseAddress, region.count, off_t(region.offset)) }
            return got == region.count ? buffer : nil
        case .failure: return nil
        }
    }

    /// An origin out of reach for a moment (here: a gateway's 503 twice): a player's read
    /// asks again until the bytes come; a scanner's fails at once.
    @Test(arguments: [ReaderClass.player, .scanner])
    func aPlayersReadRidesOutAShortOutage(readerClass: ReaderClass) throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        let size: Int64 = 300_000
        let item = try fixture.addItem("v.mp4", size: size, seed: 5)
        fixture.origin.setFault("/v.mp4", .status(503), times: 2)
        let reading = LibraryReader(fetcher: fixture.fetcher, view: LibraryView(store: fixture.store), readTimeout: .seconds(10),
                                    outageRetryInterval: .milliseconds(50))
        let open = reading.openMedia(itemID: item.id, size: size, isCached: false, hasLicenceExpiry: false, readerClass: readerClass)
        defer { open.reader.close() }
        let answers = read(open.reader, at: 0, count: 4096).value
        #expect(answers.count == 1)
        if readerClass == .player {
            #expect(answers.first.flatMap(bytes(of:)).map { Data($0) } == GeneratedBytes(size: size, seed: 5).bytes(in: 0..<4096))
            #expect(fixture.origin.requests(for: "/v.mp4").count == 3)
        } else {
            guard case .failure(let error)? = answers.first else { Issue.record("answers: \(answers)"); return }
            #expect(error.reason == .httpStatus(503))
        }
    }

    /// A link that hangs longer than the read bound (a tunnel): a player's read waits on to
    /// its own, longer bound (`outage-timeout`) and gets the bytes once the origin answers
    /// again; `cat`'s read fails by the read bound.
    @Test(arguments: [ReaderClass.player, .other])
    func aPlayersReadOutlastsAHangLongerThanTheReadBound(readerClass: ReaderClass) throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        let size: Int64 = 300_000
        let item = try fixture.addItem("v.mp4", size: size, seed: 6)
        defer { fixture.origin.releaseStalls() }
        // Two requests hang (the fixture's stall limit ends each after 1 s), the third answers
        fixture.origin.setFault("/v.mp4", .stallBeforeHeaders(seconds: 20), times: 2)
        let reading = LibraryReader(fetcher: fixture.fetcher, view: LibraryView(store: fixture.store),
                                    readTimeout: .milliseconds(700), outageTimeout: .seconds(10),
                                    outageRetryInterval: .milliseconds(50))
        let open = reading.openMedia(itemID: item.id, size: size, isCached: false, hasLicenceExpiry: false, readerClass: readerClass)
        defer { open.reader.close() }
        let start = ContinuousClock.now
        let answers = read(open.reader, at: 0, count: 4096).value
        #expect(answers.count == 1)
        if readerClass == .player {
            #expect(answers.first.flatMap(bytes(of:)).map { Data($0) } == GeneratedBytes(size: size, seed: 6).bytes(in: 0..<4096))
            #expect(ContinuousClock.now - start > .milliseconds(1500))
        } else {
            // The wait's deadline, or under load the transfer's stall limit first
            guard case .failure(let error)? = answers.first else { Issue.record("answers: \(answers)"); return }
            #expect(error.code == .timedOut || error.reason == .timeout, "\(error)")
            #expect(ContinuousClock.now - start < .milliseconds(1500))
        }
    }

    /// A backup with the origin down: the first read rides the outage out to the bound; the
    /// reads after it, of that file or another of the same origin, fail at once, until the
    /// origin answers again and a short outage is ridden out as before.
    @Test func onceAnOutageOutlastedTheBoundReadsFailAtOnceUntilTheOriginAnswers() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        let size: Int64 = 300_000
        let first = try fixture.addItem("a.mp4", size: size, seed: 1)
        let second = try fixture.addItem("b.mp4", size: size, seed: 2)
        let reading = LibraryReader(fetcher: fixture.fetcher, view: LibraryView(store: fixture.store),
                                    readTimeout: .milliseconds(300), outageTimeout: .seconds(1),
                                    outageRetryInterval: .milliseconds(50))
        func timedRead(_ item: Item, at offset: Int64) -> (answer: ReadAnswer?, took: Duration) {
            let open = reading.openMedia(itemID: item.id, size: size, isCached: false, hasLicenceExpiry: false, readerClass: .copier)
            defer { open.reader.close() }
            let start = ContinuousClock.now
            let answers = read(open.reader, at: offset, count: 4096).value
            return (answers.first, ContinuousClock.now - start)
        }
        fixture.origin.setFault("/a.mp4", .status(503))
        fixture.origin.setFault("/b.mp4", .status(503))
        let ridden = timedRead(first, at: 0)
        #expect(ridden.took >= .milliseconds(800), "\(ridden.took)")
        for (item, offset) in [(first, Int64(100_000)), (second, 0)] {
            let atOnce = timedRead(item, at: offset)
            guard case .failure(let error)? = atOnce.answer else { Issue.record("answer: \(String(describing: atOnce.answer))"); return }
            #expect(error.reason == .httpStatus(503))
            #expect(atOnce.took < .milliseconds(300), "\(atOnce.took)")
        }
        // The origin answers: a read gets its bytes, and a later short outage is ridden out
        fixture.origin.clearFaults()
        #expect(timedRead(first, at: 0).answer.flatMap(bytes(of:)).map { Data($0) } == GeneratedBytes(size: size, seed: 1).bytes(in: 0..<4096))
        fixture.origin.setFault("/b.mp4", .status(503), times: 2)
        #expect(timedRead(second, at: 0).answer.flatMap(bytes(of:)).map { Data($0) } == GeneratedBytes(size: size, seed: 2).bytes(in: 0..<4096))
    }

    /// A player on a slow link jumps ahead (a chapter): the fetch of the place it left stops,
    /// instead of filling its read-ahead with the link the new place needs.
    @Test func aPlayersJumpStopsTheFetchOfThePlaceItLeft() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        let size: Int64 = 40 << 20
        let item = try fixture.addItem("film.mp4", size: size, seed: 8)
        fixture.origin.setFault("/film.mp4", .trickle(bytesPerSecond: 2 << 20))
        let open = reading(fixture).openMedia(itemID: item.id, size: size, isCached: false, hasLicenceExpiry: false,
                                              readerClass: .player)
        defer { open.reader.close() }
        let expected = GeneratedBytes(size: size, seed: 8)
        // Given a player that has played the first 3 MiB (its read-ahead grown to MiBs)
        for offset in stride(from: Int64(0), to: 3 << 20, by: 256 << 10) {
            let answer = read(open.reader, at: offset, count: 256 << 10).value
            #expect(answer.count == 1 && bytes(of: answer[0]).map { Data($0) } == expected.bytes(in: offset..<offset + (256 << 10)))
        }
        // When it jumps to 30 MiB
        let jump = read(open.reader, at: 30 << 20, count: 64 << 10).value
        #expect(jump.count == 1 && bytes(of: jump[0]).map { Data($0) } == expected.bytes(in: (30 << 20)..<(30 << 20) + (64 << 10)))
        // Then the bytes after the place it left stop coming (the fetch sent 2 MiB a second)
        Thread.sleep(forTimeInterval: 2.5)
        #expect(!fixture.fetcher.isAvailable(itemID: item.id, file: "media", range: ByteRange(7 << 20, (7 << 20) + (512 << 10))))
    }

    @Test func aCachedRangeIsAnsweredAtOnceAsARegionOfTheCacheFileCutAtTheEnd() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        let size: Int64 = 300_000
        let item = try fixture.addItem("v.mp4", size: size, seed: 5)
        let download = fixture.download(item)
        guard download.succeeded else { Issue.record("download: \(download)"); return }
        let expected = GeneratedBytes(size: size, seed: 5)
        let open = reading(fixture).openMedia(itemID: item.id, size: size, isCached: true, hasLicenceExpiry: false,
                                              readerClass: .copier)
        #expect(open.whole && open.mayBypass && open.pagesStayValid)
        defer { open.reader.close() }

        // A read inside the file: one answer, a region of the cache file, without waiting.
        var waited = false
        let inside = read(open.reader, at: 1_000, count: 65_536, onWait: { _ in waited = true }).value
        #expect(!waited)
        guard inside.count == 1, case .cacheFile(let region) = inside[0] else { Issue.record("answers: \(inside)"); return }
        #expect(region.offset == 1_000 && region.count == 65_536)
        #expect(bytes(of: inside[0]).map { Data($0) } == expected.bytes(in: 1_000..<66_536))

        // Across the end: cut there. At the end: empty.
        let across = read(open.reader, at: size - 100, count: 65_536).value
        #expect(across.count == 1 && bytes(of: across[0])?.count == 100)
        let atEnd = read(open.reader, at: size, count: 4_096).value
        guard atEnd.count == 1, case .bytes(let none) = atEnd[0] else { Issue.record("answers: \(atEnd)"); return }
        #expect(none.isEmpty)
    }

    @Test func aWaitingReadCancelledIsAnsweredCancelledOnceAndNotAgainWhenTheBytesCome() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        let size: Int64 = 1 << 20
        let item = try fixture.addItem("v.mp4", size: size, seed: 6)
        // Given an origin that holds its answer back a while
        fixture.origin.setFault("/v.mp4", .stallBeforeHeaders(seconds: 0.5), times: 1)
        let open = reading(fixture).openMedia(itemID: item.id, size: size, isCached: false, hasLicenceExpiry: false,
                                              readerClass: .other)
        defer { open.reader.close() }

        // When a read that must wait is cancelled (as a FUSE interrupt does) before its bytes come
        let answers = read(open.reader, at: 0, count: 4_096, onWait: { cancellation in cancellation.cancel() })

        // Then its one answer is the cancel
        guard answers.value.count == 1, case .failure(let error) = answers.value[0] else {
            Issue.record("answers: \(answers.value)")
            return
        }
        #expect(error.code == .cancelled)
        // And once the bytes have come (another reader gets them), it gets no second answer
        let later = read(open.reader, at: 0, count: 4_096).value
        #expect(later.count == 1 && bytes(of: later[0]).map { Data($0) } == GeneratedBytes(size: size, seed: 6).bytes(in: 0..<4_096))
        #expect(answers.value.count == 1)
    }

    /// The read bound is for bytes neither cached nor arriving: a read on a slow link whose
    /// bytes trickle in takes as long as they take; one whose origin sends nothing fails by then.
    @Test func aReadWaitsForBytesThatTrickleInAndFailsWhenNoneCome() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        let size: Int64 = 1 << 20
        let item = try fixture.addItem("slow.mp4", size: size, seed: 9)
        defer { fixture.origin.releaseStalls() }
        let open = reading(fixture, readTimeout: .seconds(1)).openMedia(itemID: item.id, size: size, isCached: false,
                                                                         hasLicenceExpiry: false, readerClass: .other)
        defer { open.reader.close() }
        // Given an origin sending 64 KiB a second: 192 KiB take three times the bound
        fixture.origin.setFault("/slow.mp4", .trickle(bytesPerSecond: 64 << 10))
        let start = ContinuousClock.now
        let slow = read(open.reader, at: 0, count: 192 << 10).value
        #expect(ContinuousClock.now - start > .seconds(2))
        #expect(slow.count == 1 && bytes(of: slow[0]).map { Data($0) } == GeneratedBytes(size: size, seed: 9).bytes(in: 0..<(192 << 10)))
        // And once it sends nothing, a read fails by the bound: the wait's deadline or the
        // transfer's own stall limit (the fixture's is as short), whichever comes first
        fixture.origin.setFault("/slow.mp4", .stallBeforeHeaders(seconds: 20))
        let stalledAt = ContinuousClock.now
        let stalled = read(open.reader, at: 800 << 10, count: 64 << 10).value
        guard stalled.count == 1, case .failure(let error) = stalled[0] else { Issue.record("answers: \(stalled)"); return }
        #expect(error.code == .timedOut || error.reason == .timeout, "\(error)")
        #expect(ContinuousClock.now - stalledAt < .seconds(8))
    }

    /// A scanner's small reads out of order near one another (gst-discoverer reads 300 B to
    /// 7 KiB) share one request: each read that missed was a round trip of its own.
    @Test func aScannersSmallReadsNearOneAnotherShareARequest() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        let size: Int64 = 40 << 20
        let item = try fixture.addItem("v.mp4", size: size, seed: 3)
        let open = reading(fixture).openMedia(itemID: item.id, size: size, isCached: false, hasLicenceExpiry: false,
                                              readerClass: .scanner)
        defer { open.reader.close() }
        // When it reads 4 KiB pieces out of order, within 256 KiB at the start and in the middle
        let expected = GeneratedBytes(size: size, seed: 3)
        let middle: Int64 = 20 << 20
        for offset in [100_000, 4_096, 180_000, 60_000, middle + 70_000, middle + 10_000, middle + 200_000] {
            let answer = read(open.reader, at: offset, count: 4_096).value
            #expect(answer.count == 1 && bytes(of: answer[0]).map { Data($0) } == expected.bytes(in: offset..<offset + 4_096), "\(offset)")
        }
        // Then one request served each stretch, and it asked for no more than the stretch
        let requests = fixture.origin.requests(for: "/v.mp4")
        #expect(requests.count == 2, "\(requests.map { $0.header("range") ?? "" })")
        #expect(requests.map { $0.header("range") } == ["bytes=0-262143", "bytes=\(middle)-\(middle + 262_143)"])
    }

    @Test func aScannersReadBeyondItsAllowanceFailsAtOnceWithoutAFetch() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        let size: Int64 = 40 << 20
        let item = try fixture.addItem("v.mp4", size: size, seed: 7)
        let open = reading(fixture).openMedia(itemID: item.id, size: size, isCached: false, hasLicenceExpiry: false,
                                              readerClass: .scanner)
        defer { open.reader.close() }
        // The default allowance (`scanner-reads header`) covers the start and end of a file, and
        // 4 MiB elsewhere: a fifth MiB in the middle is beyond it
        let expected = GeneratedBytes(size: size, seed: 7)
        for mebibyte in Int64(20)..<24 {
            let offset = mebibyte << 20
            let answer = read(open.reader, at: offset, count: 1 << 20).value
            #expect(answer.count == 1 && bytes(of: answer[0]).map { Data($0) } == expected.bytes(in: offset..<offset + (1 << 20)))
        }
        let requests = fixture.origin.requests(for: "/v.mp4").count
        let beyond = read(open.reader, at: 30 << 20, count: 65_536).value
        guard beyond.count == 1, case .failure(let error) = beyond[0] else { Issue.record("answers: \(beyond)"); return }
        #expect(error.code == .unavailable)
        #expect(fixture.origin.requests(for: "/v.mp4").count == requests)
        let start = read(open.reader, at: 0, count: 65_536).value
        #expect(start.count == 1 && bytes(of: start[0]).map { Data($0) } == expected.bytes(in: 0..<65_536))
    }
}
