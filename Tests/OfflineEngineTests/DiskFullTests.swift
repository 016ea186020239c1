import Foundation
import OfflineEngine
import OfflineStore
import OfflineTestSupport
import Testing

/// HARDENING 12: a small tmpfs as the library. A download that cannot fit waits as
/// `no-space`/`cache-limit`, a disk that fills mid-download claims nothing it did not write,
/// and the item completes once space is freed.
@Suite(.serialized) struct DiskFullTests {
    /// Mounts an 8 MiB tmpfs, or returns why not (the exact skip reason).
    private static func mountTmpfs() -> (URL?, String?) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("offlinefs-tmpfs-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/mount")
        process.arguments = ["-t", "tmpfs", "-o", "size=8m", "tmpfs", folder.path]
        let errors = Pipe()
        process.standardError = errors
        do { try process.run() } catch { return (nil, "cannot run mount: \(error)") }
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            return (nil, "mount -t tmpfs failed (\(process.terminationStatus)): \(message)")
        }
        return (folder, nil)
    }

    private static func unmount(_ folder: URL) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/umount")
        // Lazy: the library under test may still hold files open there; detach regardless.
        process.arguments = ["-l", folder.path]
        try? process.run()
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: folder)
    }

    private static func fill(_ folder: URL, bytes: Int) throws -> URL {
        let url = folder.appendingPathComponent("filler")
        try Data(count: bytes).write(to: url)
        return url
    }

    /// Runs `body` with an engine whose library is on a fresh 8 MiB tmpfs, detached after.
    /// Without the tmpfs (not root, no mount) the test fails with the exact reason: a
    /// silently passing test would claim HARDENING 12 is shown when it is not.
    private func withSmallDisk(_ body: (URL, EngineFixture) throws -> Void) throws {
        let (mounted, reason) = Self.mountTmpfs()
        let tmpfs = try #require(mounted, "no tmpfs for the disk-full tests: \(reason ?? "")")
        defer { Self.unmount(tmpfs) }
        let f = try EngineFixture(folder: tmpfs.appendingPathComponent("library"))
        defer { f.close() }
        try body(tmpfs, f)
    }

    @Test func tooBigForTheDiskIsNoSpaceUntilFreed() throws {
        try withSmallDisk { tmpfs, f in
            // Given a disk with about 2 MiB free and an item of 4 MiB
            let filler = try Self.fill(tmpfs, bytes: 5 << 20)
            let item = try f.addItem("a.mp4", size: 4 << 20)
            f.start()
            try f.perform(.download(item: "src/a.mp4", options: DownloadOptions()))
            // Then it waits as no-space without writing
            #expect(try f.wait(item, .idle).error == .noSpace)
            #expect(try f.store.bytesPresent(itemID: item.id) == 0)
            // When space is freed, the next recheck downloads it whole
            try FileManager.default.removeItem(at: filler)
            f.advance(30)
            try f.wait(item, .cached)
            #expect(try f.store.integrityCheck() == ["ok"])
        }
    }

    @Test func diskFillingMidDownloadClaimsOnlyWrittenBytes() throws {
        try withSmallDisk { tmpfs, f in
            // Given a catalog that understates the size, so the engine cannot know it won't fit
            let size: Int64 = 5 << 20
            let filler = try Self.fill(tmpfs, bytes: 4 << 20)
            let item = try f.addItem("a.mp4", size: size, seed: 3, catalogSize: .some(nil))
            f.start()
            try f.perform(.download(item: "src/a.mp4", options: DownloadOptions()))
            let stopped = try f.wait(item, .idle)
            #expect(stopped.error == .noSpace)
            // Then every claimed byte is the origin's and the database is sound
            let expected = GeneratedBytes(size: size, seed: 3)
            let path = f.engine.transfers.fetcher.cacheFilePath(itemID: item.id, file: "media")
            let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            defer { try? handle.close() }
            for range in try f.store.presentRanges(itemID: item.id, file: "media") {
                try handle.seek(toOffset: UInt64(range.lowerBound))
                #expect(try handle.read(upToCount: range.count) == expected.bytes(in: range))
            }
            #expect(try f.store.integrityCheck() == ["ok"])
            // When space is freed it resumes and completes with the right bytes
            try FileManager.default.removeItem(at: filler)
            f.advance(30)
            let done = try f.wait(item, .cached)
            #expect(done.bytesPresent == size)
            try handle.seek(toOffset: 0)
            #expect(try handle.read(upToCount: Int(size)) == expected.bytes())
        }
    }

    @Test func cacheLimitOnTheSmallDisk() throws {
        try withSmallDisk { tmpfs, f in
            try f.store.setPolicy(name: "cache-limit", value: "1MiB")
            let item = try f.addItem("a.mp4", size: 2 << 20)
            f.start()
            try f.perform(.download(item: "src/a.mp4", options: DownloadOptions()))
            #expect(try f.wait(item, .idle).error == .cacheLimit)
            try f.perform(.setPolicy(name: "cache-limit", value: "4MiB"))
            try f.wait(item, .cached)
        }
    }
}
