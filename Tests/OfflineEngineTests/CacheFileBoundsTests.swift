import Foundation
@testable import OfflineEngine
import OfflineHTTP
import OfflineStore
import OfflineTestSupport
import Testing

/// However many files the engine touches, it keeps a bounded number of cache file descriptors
/// open (`CacheDescriptors`) and lets go of the state of files nobody uses (`CachedFileTable`).
@Suite struct CacheFileBoundsTests {
    static let settings: FetchSettings = {
        var settings = TransferFixture.testSettings
        settings.idleFilesKept = 4
        settings.cacheDescriptors = 4
        return settings
    }()

    @Test func readingManyFilesInTurnKeepsTheirDescriptorsBounded() throws {
        let fixture = try TransferFixture(settings: Self.settings)
        defer { fixture.close() }
        let items = try (0..<60).map { try fixture.addItem("f\($0)", size: 8_192, seed: UInt64($0 + 1)) }
        var peak = 0
        // When each file is read once, in turn
        for (n, item) in items.enumerated() {
            guard case .success = fixture.fetch(item, 0..<8_192) else { Issue.record("read of f\(n) failed"); return }
            #expect(try fixture.cachedBytes(item, 0..<8_192) == GeneratedBytes(size: 8_192, seed: UInt64(n + 1)).bytes(in: 0..<8_192))
            peak = max(peak, fixture.fetcher.openCacheDescriptors)
            // Its claim committed now, not at the flusher's next turn (later under load): the
            // file is then idle when the next files come, as one read long ago would be.
            _ = try fixture.fetcher.flush(itemID: item.id, file: "media")
        }
        // Then no more descriptors stayed open than the pool keeps, plus those a few threads
        // (transfer, flusher, block writes) may borrow at one moment
        #expect(peak <= Self.settings.cacheDescriptors + 3, "peak \(peak)")
        #expect(fixture.fetcher.openCacheDescriptors <= Self.settings.cacheDescriptors + 3)
        // And the first files' state was let go
        #expect(!fixture.fetcher.holds(itemID: items[0].id, file: "media"))
    }

    @Test func aFileLetGoIsReadAgainFromTheCacheNotFromTheOrigin() throws {
        let fixture = try TransferFixture(settings: Self.settings)
        defer { fixture.close() }
        let first = try fixture.addItem("first", size: 1 << 20, seed: 3)
        let others = try (0..<20).map { try fixture.addItem("o\($0)", size: 4_096, seed: UInt64($0 + 10)) }
        // Given the first 256 KiB of a file fetched and claimed
        guard case .success = fixture.fetch(first, 0..<262_144) else { Issue.record("first read failed"); return }
        _ = try fixture.fetcher.flush(itemID: first.id, file: "media")
        // And enough other files read since that the fetcher let go of it
        for other in others {
            guard case .success = fixture.fetch(other, 0..<4_096) else { Issue.record("read failed"); return }
            _ = try fixture.fetcher.flush(itemID: other.id, file: "media")
        }
        #expect(!fixture.fetcher.holds(itemID: first.id, file: "media"))
        // When its bytes are read again
        fixture.origin.clearLog()
        guard case .success = fixture.fetch(first, 0..<262_144) else { Issue.record("second read failed"); return }
        // Then they come from the cache file: the origin is not asked again
        #expect(fixture.origin.requests(for: "/first").isEmpty)
        #expect(try fixture.cachedBytes(first, 0..<262_144) == GeneratedBytes(size: 1 << 20, seed: 3).bytes(in: 0..<262_144))
    }
}

/// A cache file replaced at its path (a side file shared by link, then discarded) is opened
/// anew; a descriptor in use meanwhile stays valid until it is given back.
@Suite struct CacheDescriptorReopenTests {
    @Test func aFileReopenedWhileBorrowedClosesItsOldDescriptorWhenGivenBack() throws {
        let folder = NSTemporaryDirectory() + "offlinefs-reopen-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let pool = CacheDescriptors(capacity: 4)
        let file = CacheFile(path: folder + "/1/thumbnail", descriptors: pool)
        try Data("old".utf8).withUnsafeBytes { try file.write($0, at: 0) }
        // Given the file linked from another item's cache (its bytes are theirs too)
        let other = folder + "/2-thumbnail"
        #expect(link(file.path, other) == 0)
        // When its bytes are removed while a read holds its descriptor
        var borrowed: Int32 = -1
        var borrowedFile: FileIdentity?
        try pool.withDescriptor(CacheDescriptors.Key(file: ObjectIdentifier(file), direct: false),
                                open: { () throws(CacheFileError) -> Int32 in -1 }) { (fd: Int32) throws(CacheFileError) in
            borrowed = fd
            borrowedFile = FileIdentity(descriptor: fd)
            try file.removeBytes()
            #expect(fcntl(fd, F_GETFD) != -1, "closed while borrowed")
        }
        // Then the descriptor closes once given back, the other item keeps the bytes, and the
        // next write makes a new file at the path. (Tests run in parallel, so the descriptor's
        // number may already name another test's file: what must be gone is this file.)
        #expect(borrowedFile != nil)
        #expect(FileIdentity(descriptor: borrowed) != borrowedFile, "still open after given back")
        #expect(FileManager.default.contents(atPath: other) == Data("old".utf8))
        try Data("new".utf8).withUnsafeBytes { try file.write($0, at: 0) }
        #expect(FileManager.default.contents(atPath: file.path) == Data("new".utf8))
        #expect(FileManager.default.contents(atPath: other) == Data("old".utf8))
        #expect(pool.openCount == 1)
    }
}

/// A file as the kernel knows it (device and inode), or nil for a descriptor that is not open.
private struct FileIdentity: Equatable {
    let device: UInt64
    let inode: UInt64

    init?(descriptor: Int32) {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return nil }
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
    }
}
