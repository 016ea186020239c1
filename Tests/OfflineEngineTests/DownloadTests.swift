import Foundation
import OfflineEngine
import OfflineStore
import OfflineTestSupport
import Testing

/// Whole-file downloads: states, verification, sizes (HARDENING 3).
@Suite struct DownloadTests {
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
}
