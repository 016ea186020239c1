import Foundation
import OfflineEngine
import OfflineStore
import OfflineTestSupport
import Testing

/// The pages a download wrote through the page cache leave it once the file is complete
/// (`RangeFetcher.fileCompleted`); the pages readers bring in stay.
@Suite struct CompletedPagesTests {
    private let size: Int64 = 4 << 20

    /// A fresh engine with one uncached item of `size` bytes, and the item's cache file. Its
    /// bytes are written through the page cache, as where `O_DIRECT` is refused
    /// (`FetchSettings.stagingBlocks` 0; StagedWritesTests has the other way).
    private func uncachedItem(seed: UInt64) throws -> (TransferFixture, Item, path: String) {
        var settings = TransferFixture.testSettings
        settings.stagingBlocks = 0
        let fixture = try TransferFixture(settings: settings)
        let item = try fixture.addItem("v.mp4", size: size, seed: seed)
        return (fixture, item, fixture.fetcher.cacheFilePath(itemID: item.id, file: "media"))
    }

    /// Fetches all of `item` and waits (bounded) until a flush completes the file (the pages
    /// are let go after the completion handlers: see `waitForRelease`).
    private func fetchAll(_ fixture: TransferFixture, _ item: Item) throws {
        let completed = DispatchSemaphore(value: 0)
        fixture.fetcher.onFileCompleted { itemID, _ in if itemID == item.id { completed.signal() } }
        guard case .success = fixture.fetch(item, 0..<size) else {
            Issue.record("the fetch failed")
            return
        }
        _ = try fixture.fetcher.flush(itemID: item.id, file: "media")
        #expect(completed.wait(timeout: .now() + 10) == .success)
    }

    @Test(.enabled(if: PageCache.canDropPages(of: FileManager.default.temporaryDirectory.path)))
    func aCompletedFileLeavesThePageCache() throws {
        let (fixture, item, path) = try uncachedItem(seed: 11)
        defer { fixture.close() }
        // Given an item that nobody has open, when all of its bytes arrive and are flushed
        try fetchAll(fixture, item)
        // Then its cache file's pages are no longer in memory, and the file holds the origin's bytes
        #expect(try PageCache.waitForRelease(of: path) == 0)
        #expect(try fixture.committedBytesMatch(item, size: size, seed: 11))
    }

    @Test(.enabled(if: PageCache.canDropPages(of: FileManager.default.temporaryDirectory.path)))
    func aReaderOpenAtTheCompletionKeepsThePagesItReads() throws {
        let (fixture, item, path) = try uncachedItem(seed: 12)
        defer { fixture.close() }
        // Given a reader that opened an item before its last bytes arrived and were flushed
        fixture.fetcher.readerOpened(itemID: item.id)
        try fetchAll(fixture, item)
        // When it reads the whole item and closes it
        #expect(try fixture.cachedBytes(item, 0..<size) == GeneratedBytes(size: size, seed: 12).bytes(in: 0..<size))
        fixture.fetcher.readerClosed(itemID: item.id)
        // Then the pages it read stay: the next read of the item is from memory, not the disk
        #expect(try PageCache.residentBytes(of: path) == size)
    }

    @Test(.enabled(if: PageCache.canDropPages(of: FileManager.default.temporaryDirectory.path)))
    func aCachedItemReadAgainKeepsItsPages() throws {
        let (fixture, item, path) = try uncachedItem(seed: 13)
        defer { fixture.close() }
        try fetchAll(fixture, item)
        #expect(try PageCache.waitForRelease(of: path) == 0)
        // Given a cached item whose pages a reader brought back
        fixture.fetcher.readerOpened(itemID: item.id)
        _ = try fixture.cachedBytes(item, 0..<size)
        // When that reader closes it
        fixture.fetcher.readerClosed(itemID: item.id)
        // Then its pages stay: only a download's own pages are let go, once
        #expect(try PageCache.residentBytes(of: path) == size)
    }
}

/// What `mincore` says of a file's pages.
enum PageCache {
    /// Bytes of `path` in the page cache (whole pages, cut at the file's end), all of it or
    /// the pages of `range`.
    static func residentBytes(of path: String, in range: Range<Int64>? = nil) throws -> Int64 {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        let length = Int(info.st_size)
        guard length > 0 else { return 0 }
        // Mapping a file touches none of its pages; mincore then reports the page cache's.
        guard let map = mmap(nil, length, PROT_READ, MAP_SHARED, fd, 0), map != MAP_FAILED else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        defer { munmap(map, length) }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        var vector = [UInt8](repeating: 0, count: (length + page - 1) / page)
        guard mincore(map, length, &vector) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        guard let range else {
            let pages = vector.reduce(0) { $0 + Int64($1 & 1) }
            return min(pages * Int64(page), Int64(length))
        }
        let first = Int(range.lowerBound) / page, end = min(vector.count, (Int(range.upperBound) + page - 1) / page)
        let pages = vector[first..<end].reduce(0) { $0 + Int64($1 & 1) }
        return min(pages * Int64(page), Int64(range.count))
    }

    /// Waits (bounded) until none of `path`'s pages is in memory; returns the bytes left. The
    /// pages are let go on the flusher's thread after the completion handlers, which the test's
    /// own handler cannot wait for.
    static func waitForRelease(of path: String, timeout: Duration = .seconds(10)) throws -> Int64 {
        let deadline = ContinuousClock.now + timeout
        var resident = try residentBytes(of: path)
        while resident > 0 && ContinuousClock.now < deadline {
            usleep(1000)
            resident = try residentBytes(of: path)
        }
        return resident
    }

    /// False on tmpfs, whose pages are the files themselves and cannot be dropped (the
    /// file system type of the longest mount point holding `folder`, from /proc/self/mounts).
    static func canDropPages(of folder: String) -> Bool {
        guard let mounts = try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8) else { return false }
        let path = URL(fileURLWithPath: folder).resolvingSymlinksInPath().path
        var best: (point: String, type: String) = ("", "")
        for line in mounts.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 3 else { continue }
            let point = String(fields[1])
            let holds = point == "/" || path == point || path.hasPrefix(point + "/")
            if holds && point.count >= best.point.count { best = (point, String(fields[2])) }
        }
        return best.type != "tmpfs" && !best.type.isEmpty
    }
}

/// While bytes stream in, those flushed a few flushes ago leave the page cache
/// (`CachedFile.flushesKeptInMemory`); the newest stay for the reader.
@Suite struct StreamedPagesTests {
    @Test(.enabled(if: PageCache.canDropPages(of: FileManager.default.temporaryDirectory.path)))
    func bytesFlushedLongAgoLeaveThePageCacheAndTheNewestStay() throws {
        var settings = TransferFixture.testSettings
        settings.flushBytes = 256 << 10
        settings.stagingBlocks = 0  // through the page cache (see `uncachedItem`)
        let fixture = try TransferFixture(settings: settings)
        defer { fixture.close() }
        let size: Int64 = 8 << 20
        let item = try fixture.addItem("v.mp4", size: size, seed: 21, withChecksum: false)
        let path = fixture.fetcher.cacheFilePath(itemID: item.id, file: "media")
        // Given a reader streaming an item (open, so its completion lets go of nothing)
        fixture.fetcher.readerOpened(itemID: item.id)
        defer { fixture.fetcher.readerClosed(itemID: item.id) }
        // When its bytes arrive a MiB at a time, each MiB flushed (and some more often: every
        // 256 KiB unflushed asks the flusher for one)
        let step: Int64 = 1 << 20
        for start in stride(from: Int64(0), to: size, by: Int(step)) {
            guard case .success = fixture.fetch(item, start..<(start + step)) else { Issue.record("the fetch failed"); return }
            _ = try fixture.fetcher.flush(itemID: item.id, file: "media")
        }
        // Then its first bytes have left the page cache, its last bytes are still there
        #expect(try PageCache.residentBytes(of: path, in: 0..<(1 << 20)) == 0)
        #expect(try PageCache.residentBytes(of: path, in: (size - 4096)..<size) == 4096)
        // And every byte reads back as the origin's
        #expect(try fixture.committedBytesMatch(item, size: size, seed: 21))
    }
}
