import Foundation
@testable import OfflineEngine
import OfflineHTTP
import OfflineStore
import OfflineTestSupport
import Testing

/// Whole-file downloads: states, verification, sizes (HARDENING 3).
@Suite struct DownloadTests {
    /// Starts `item`'s download on another thread: its result, and what is signalled when it is there.
    private func downloadInBackground(_ item: Item, _ fixture: TransferFixture) -> (Box<DownloadResult?>, DispatchSemaphore) {
        let result = Box<DownloadResult?>(nil)
        let downloaded = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            result.value = fixture.download(item)
            downloaded.signal()
        }
        return (result, downloaded)
    }

    @Test(arguments: [Int64(0), 1, 4096, 3 << 20])
    func downloadsAndVerifies(size: Int64) throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        // Given an item whose catalog gives its size and sha256
        let item = try fixture.addItem("a.mp4", size: size, seed: 11)
        // When it is downloaded
        let result = fixture.download(item)
        // Then it is cached, every byte claimed, and the file matches the origin
        #expect(result.state == .cached, "\(result)")
        let stored = try #require(try fixture.store.item(id: item.id))
        #expect(stored.state == .cached)
        #expect(stored.bytesPresent == size)
        #expect(stored.downloadedAt != nil)
        #expect(try fixture.store.presentRanges(itemID: item.id, file: "media") == (size > 0 ? [0..<size] : []))
        #expect(try fixture.cachedBytes(item, 0..<size) == GeneratedBytes(size: size, seed: 11).bytes())
    }

    @Test func wrongChecksumIsCorruptedAndDiscarded() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        // Given a catalog checksum that belongs to other bytes
        let item = try fixture.addItem("a.mp4", size: 100_000, seed: 1)
        fixture.origin.serve("/a.mp4", .generated(size: 100_000, seed: 2))
        // When it is downloaded
        let result = fixture.download(item)
        // Then it fails as corrupted and no byte stays claimed
        #expect(result.state == .failed)
        #expect(result.error == .corrupted)
        #expect(try fixture.store.presentRanges(itemID: item.id, file: "media").isEmpty)
        #expect(try fixture.store.item(id: item.id)?.error == .corrupted)
    }

    @Test func wrongCatalogSizeIsCorrected() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        let item = try fixture.addItem("a.mp4", size: 50_000, seed: 3, catalogSize: 70_000)
        let result = fixture.download(item)
        #expect(result.state == .cached, "\(result)")
        #expect(try fixture.store.item(id: item.id)?.size == 50_000)
    }

    @Test func resumesFromCommittedBytesAfterRestart() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        let size: Int64 = 2 << 20
        let item = try fixture.addItem("a.mp4", size: size, seed: 5)
        // Given a first transfer cut by the origin after 1 MiB, with the budget of one attempt
        fixture.origin.setFault("/a.mp4", .truncate(afterBytes: 1 << 20))
        let first = Downloader(store: fixture.store, fetcher: fixture.fetcher, hls: HLSStreams(store: fixture.store), attemptsPerDownload: 1).download(itemID: item.id)
        #expect(first.state == .idle)
        #expect(first.error == .networkError)
        let claimed = try fixture.store.bytesPresent(itemID: item.id, file: "media")
        #expect(claimed > 0 && claimed <= 1 << 20)
        #expect(try fixture.committedBytesMatch(item, size: size, seed: 5))
        // When the engine restarts and downloads again
        fixture.origin.clearFaults()
        fixture.origin.clearLog()
        try fixture.restartEngine()
        let second = fixture.download(item)
        // Then it asks only for the rest, with If-Range, and completes
        #expect(second.state == .cached, "\(second)")
        let requests = fixture.origin.requests(for: "/a.mp4")
        #expect(requests.count == 1)
        #expect(requests.first?.header("range") == "bytes=\(claimed)-\(size - 1)")
        #expect(requests.first?.header("if-range") != nil)
        #expect(requests.first?.status == 206)
    }

    @Test func originDownIsIdleNoNetwork() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        let item = try fixture.addItem("a.mp4", size: 10_000, seed: 1)
        fixture.origin.goOffline()
        let result = fixture.download(item)
        #expect(result.state == .idle)
        #expect(result.error == .noNetwork)
    }

    @Test func aDownloadGivesTheLinkToAReaderOfAnotherItem() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        let size: Int64 = 8 << 20
        let download = try fixture.addItem("down.mp4", size: size, seed: 21)
        // Given an open item whose reader's bytes trickle in
        let read = try fixture.addItem("read.mp4", size: 4 << 20, seed: 22)
        fixture.origin.setFault("/read.mp4", .trickle(bytesPerSecond: 200_000))
        fixture.fetcher.readerOpened(itemID: read.id)
        let reader = fixture.ask(read, 0..<(2 << 20), timeout: .seconds(30))
        try waitUntil { !fixture.origin.requests(for: "/read.mp4").isEmpty }
        // When another item downloads meanwhile
        let (result, downloaded) = downloadInBackground(download, fixture)
        // Then it waits while the reader receives (loopback would carry it in a moment),
        #expect(downloaded.wait(timeout: .now() + 1.5) == .timedOut)
        #expect(fixture.origin.bodyBytesSent(for: "/down.mp4") < size)
        // and goes on once the reader is gone, every byte verified
        reader.ticket?.cancel()
        fixture.fetcher.readerClosed(itemID: read.id)
        #expect(downloaded.wait(timeout: .now() + 10) == .success)
        #expect(result.value?.state == .cached, "\(String(describing: result.value))")
        #expect(try fixture.cachedBytes(download, 0..<size) == GeneratedBytes(size: size, seed: 21).bytes())
    }

    /// On a slow link a held download's connection went on taking what its receive window
    /// allowed (seconds of the link): a slow download ends instead, and goes on afterwards
    /// with a request from where it stopped.
    @Test func aSlowDownloadEndsForAReaderAndGoesOnFromWhereItStopped() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        let size: Int64 = 4 << 20
        let download = try fixture.addItem("down.mp4", size: size, seed: 31)
        let read = try fixture.addItem("read.mp4", size: 1 << 20, seed: 32)
        // Given a download receiving 1 MB a second (under `endHeldBelow`), half a MiB in
        fixture.origin.setFault("/down.mp4", .trickle(bytesPerSecond: 1_000_000), times: 1)
        let (result, downloaded) = downloadInBackground(download, fixture)
        func cursor() -> Int64 { fixture.fetcher.fetchPositions(itemID: download.id, file: "media").first?.cursor ?? 0 }
        try waitUntil { cursor() >= 512 << 10 }
        // When a reader of another item waits for bytes that are slow to come
        fixture.origin.setFault("/read.mp4", .stall(seconds: 30), times: 1)
        fixture.fetcher.readerOpened(itemID: read.id)
        let reader = fixture.ask(read, 0..<65_536, timeout: .seconds(30))
        // Then the download's transfer ends, and its next request, from where it stopped,
        // waits while the reader's receives
        try waitUntil { fixture.origin.requests(for: "/down.mp4").count == 2 }
        let restart = try #require(fixture.origin.requests(for: "/down.mp4").last?.header("range"))
        let from = try #require(Int64(restart.dropFirst("bytes=".count).prefix { $0 != "-" }))
        #expect(from >= 512 << 10 && from < size, "\(restart)")
        #expect(downloaded.wait(timeout: .now() + 1) == .timedOut)
        // and once the reader has its bytes the download ends cached, every byte verified
        fixture.origin.releaseStalls()
        #expect(reader.answered.wait(timeout: .now() + 10) == .success)
        fixture.fetcher.readerClosed(itemID: read.id)
        #expect(downloaded.wait(timeout: .now() + 20) == .success)
        #expect(result.value?.state == .cached, "\(String(describing: result.value))")
        #expect(try fixture.cachedBytes(download, 0..<size) == GeneratedBytes(size: size, seed: 31).bytes())
        // (no byte asked twice, and no third request: a held transfer's headers, which
        // libcurl hands over together after the pause, are read whole)
        let ranges = fixture.origin.requests(for: "/down.mp4").map { $0.header("range") ?? "" }
        #expect(ranges == ["bytes=0-", restart], "\(ranges)")
    }

    @Test func aDownloadGivesTheLinkToAReaderFarAheadInTheSameItem() throws {
        // (Stalls last until released: the low-speed limit is not what this is about.)
        let fixture = try TransferFixture(settings: FetchSettings(
            timeouts: HTTPTimeouts(connect: 2, lowSpeedBytesPerSecond: 1, lowSpeedSeconds: 30), nearBytes: 512 << 10))
        defer { fixture.close() }
        let size: Int64 = 4 << 20
        let item = try fixture.addItem("film.mp4", size: size, seed: 23)
        // Given a download of an item, its bytes coming in
        fixture.origin.setFault("/film.mp4", .trickle(bytesPerSecond: 1_000_000), times: 1)
        let (result, downloaded) = downloadInBackground(item, fixture)
        func downloadCursor() -> Int64? { fixture.fetcher.fetchPositions(itemID: item.id, file: "media").first?.cursor }
        try waitUntil { (downloadCursor() ?? 0) > 0 }
        // When a player seeks far ahead in it (past `nearBytes`) and its answer is slow to come
        fixture.origin.setFault("/film.mp4", .stall(seconds: 30), times: 1)
        fixture.fetcher.readerOpened(itemID: item.id)
        let reader = fixture.ask(item, (3 << 20)..<((3 << 20) + 65_536), timeout: .seconds(30))
        try waitUntil { fixture.origin.requests(for: "/film.mp4").count == 2 }
        // Then the download's fetch waits while the player's receives (at 1 MB/s it would move)
        let held = downloadCursor()
        #expect(reader.answered.wait(timeout: .now() + 1) == .timedOut)
        #expect(downloadCursor() == held)
        // and both go on once the player's bytes are in
        fixture.origin.releaseStalls()
        #expect(reader.answered.wait(timeout: .now() + 10) == .success)
        fixture.fetcher.readerClosed(itemID: item.id)
        #expect(downloaded.wait(timeout: .now() + 60) == .success)
        #expect(result.value?.state == .cached, "\(String(describing: result.value))")
        #expect(try fixture.cachedBytes(item, 0..<size) == GeneratedBytes(size: size, seed: 23).bytes())
    }
}
