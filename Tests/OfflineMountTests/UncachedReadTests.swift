import Foundation
import OfflineEngine
import OfflineTestSupport
import OfflineStore
import Testing

/// Reads of bytes that are not in the cache: streamed from the origin through the engine's
/// range fetcher, checked against the origin's bytes.
extension RealMounts {
@Suite(.serialized,
       .enabled(if: FUSEAvailability.hasDevFuse, "no /dev/fuse"),
       .enabled(if: FUSEAvailability.hasFusermount, "no fusermount3 in PATH"))
struct UncachedReadTests {
    @Test func catOfAnUncachedItemStreamsTheOriginsBytesAndTheItemBecomesCached() throws {
        let library = try StandardLibrary()
        let fixture = library.fixture
        let item = library.items["ep-004"]!
        try withMount(fixture, options: ["refresh=100ms"]) { (mount: MountedLibrary) throws in
            let expected = fixture.directory + "/expected"
            try fixture.originBytes(item).write(to: URL(fileURLWithPath: expected))
            let cmp = try mount.run(["cmp", expected, fixture.path("sources/acme/\(StandardLibrary.remote)")])
            #expect(cmp.status == 0, "\(cmp.stdout)\(cmp.stderr)")
            // Every byte arrived: the item is cached, and the mount shows it so.
            #expect(waitUntil { (try? fixture.store.item(id: item.id)?.state) == .cached })
            #expect(waitUntil { names(fixture.path("state/cached")).contains(StandardLibrary.remote) })
        }
    }

    /// A reader that proved sequential got read-ahead megabytes beyond its reads; once it
    /// closes, the origin sends nothing more for it (issue 22: no transfer still sending 1 s
    /// after the last reader closed).
    @Test func readAheadStopsWhenTheLastReaderCloses() throws {
        let fixture = try LibraryFixture()
        let source = try fixture.addSource("acme")
        let item = try #require(try fixture.merge(source, [ItemSpec(contentID: "big", title: "Big", size: 64 << 20, seed: 9)])["big"])
        let path = try #require(item.mediaURL.flatMap(URL.init(string:))).path
        fixture.origin.setFault(path, .trickle(bytesPerSecond: 4 << 20))
        try withMount(fixture) { (mount: MountedLibrary) throws in
            // When a program reads the first 6 MiB in order (its read-ahead grows to 8 MiB) and exits
            let head = try mount.run(["sh", "-c", "head -c 6291456 \"$0\" | wc -c", fixture.path("sources/acme/Big [big].mp4")],
                                     deadline: 60)
            #expect(head.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "6291456", "\(head.stderr)")
            // Then, from a second after the close, the origin sends nothing for a second
            usleep(1_000_000)  // the grace the issue allows a transfer to wind down
            let before = fixture.origin.bodyBytesSent(for: path)
            usleep(1_000_000)  // the window in which nothing may be sent
            let sent = fixture.origin.bodyBytesSent(for: path) - before
            #expect(sent == 0, "\(sent) bytes sent 1–2 s after the last close")
        }
    }

    /// A player that seeks far into an item that is downloading while two other programs
    /// stream it gets its bytes from a range of its own at once, not when the download
    /// reaches them (issue 22: within 1 s).
    @Test func aFarSeekDuringADownloadWithTwoReadersIsAnsweredAtOnce() throws {
        let fixture = try LibraryFixture()
        let source = try fixture.addSource("acme")
        let size: Int64 = 64 << 20
        let item = try #require(try fixture.merge(source, [ItemSpec(contentID: "big", title: "Big", size: size, seed: 21)])["big"])
        let path = try #require(item.mediaURL.flatMap(URL.init(string:))).path
        fixture.origin.setFault(path, .trickle(bytesPerSecond: 2 << 20))
        try withMount(fixture) { (mount: MountedLibrary) throws in
            let file = fixture.path("sources/acme/Big [big].mp4")
            #expect(fixture.control("download sources/acme/Big [big].mp4\n") == nil)
            #expect(waitUntil { (try? fixture.current(item).state) == .downloading })
            let readers = try (0..<2).map { _ in try ChildProcess.start(["dd", "if=" + file, "of=/dev/null", "bs=1M"]) }
            defer { for reader in readers { reader.kill(SIGKILL); _ = reader.wait(deadline: 5) } }
            // When a player seeks to 80 % and reads 64 KiB
            let offset = size * 8 / 10
            let started = ContinuousClock.now
            let fd = open(file, O_RDONLY)
            #expect(fd >= 0)
            defer { close(fd) }
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let count = pread(fd, &buffer, buffer.count, off_t(offset))
            let waited = ContinuousClock.now - started
            // Then the bytes are the origin's, within a second
            #expect(count == buffer.count)
            #expect(buffer == [UInt8](fixture.originBytes(item)[Int(offset)..<Int(offset) + 65_536]))
            #expect(waited < .seconds(1), "the seek waited \(waited)")
        }
    }

    @Test func openingAnUncachedItemFetchesItsStartBeforeTheFirstRead() throws {
        let fixture = try LibraryFixture()
        let (item, mediaPath) = try oneVideo(fixture, size: 8 << 20, seed: 12)
        try withMount(fixture) { (_: MountedLibrary) throws in
            let fd = open(fixture.path("sources/big/Video [v].mp4"), O_RDONLY)
            #expect(fd >= 0)
            defer { close(fd) }
            // Opened, not read yet: the origin is already asked for the file's start.
            #expect(eventually { !fixture.origin.requests(for: mediaPath).isEmpty })
            #expect(fixture.origin.requests(for: mediaPath).first?.header("range")?.hasPrefix("bytes=0-") == true)
            // And the first read gets the origin's bytes.
            var buffer = [UInt8](repeating: 0, count: 65_536)
            #expect(pread(fd, &buffer, buffer.count, 0) == buffer.count)
            #expect(buffer == [UInt8](fixture.originBytes(item).prefix(65_536)))
        }
    }

    @Test func listingAFolderOpensAConnectionToItsItemsOriginAheadOfTheFirstRead() throws {
        let fixture = try LibraryFixture()
        let (item, mediaPath) = try oneVideo(fixture, size: 1 << 20, seed: 13)
        try withMount(fixture) { (mount: MountedLibrary) throws in
            // When a file manager shows the item's folder
            #expect(names(fixture.path("sources/big")).contains("Video [v].mp4"))
            // Then the origin gets one HEAD for the item (a connection for the read to come)
            // The warm-up runs on a background thread after the mount starts; on a loaded
            // two-core machine that took up to 10 s, hence the wide bound.
            #expect(eventually(within: 30) { fixture.origin.requests(for: mediaPath).map(\.method) == ["HEAD"] },
                    "\(fixture.origin.requests(for: mediaPath))")
            // And the folder shown again, then the item read: its bytes, and no second HEAD
            _ = names(fixture.path("sources/big"))
            let expected = fixture.directory + "/expected"
            try fixture.originBytes(item).write(to: URL(fileURLWithPath: expected))
            let cmp = try mount.run(["cmp", expected, fixture.path("sources/big/Video [v].mp4")])
            #expect(cmp.status == 0, "\(cmp.stdout)\(cmp.stderr)")
            let requests = fixture.origin.requests(for: mediaPath)
            #expect(requests.filter { $0.method == "HEAD" }.count == 1, "\(requests)")
        }
    }

    @Test func randomPreadAndMmapOfAnUncachedItemMatchTheOrigin() throws {
        let fixture = try LibraryFixture()
        let (item, _) = try oneVideo(fixture, size: 24 << 20, seed: 99)
        try withMount(fixture) { (_: MountedLibrary) throws in
            try checkRandomReads(path: fixture.path("sources/big/Video [v].mp4"),
                                 expected: [UInt8](fixture.originBytes(item)), seed: 7, count: 200)
        }
    }

    @Test func eightConcurrentReadersWhileTheFileFillsGetTheOriginsBytes() throws {
        let fixture = try LibraryFixture()
        let (item, _) = try oneVideo(fixture, size: 32 << 20, seed: 5)
        let expected = [UInt8](fixture.originBytes(item))
        try withMount(fixture) { (_: MountedLibrary) throws in
            let path = fixture.path("sources/big/Video [v].mp4")
            let failures = Mutex(0)
            DispatchQueue.concurrentPerform(iterations: 8) { reader in
                let fd = open(path, O_RDONLY)
                defer { close(fd) }
                let chunk = expected.count / 8
                var random = SplitMix(seed: UInt64(reader))
                var offset = chunk * reader
                while offset < chunk * (reader + 1) {
                    let length = Int(random.next() % 200_000) + 1
                    var buffer = [UInt8](repeating: 0, count: length)
                    let got = pread(fd, &buffer, length, off_t(offset))
                    let want = min(length, expected.count - offset)
                    if got != want || buffer[0..<want] != expected[offset..<offset + want] {
                        failures.withLock { $0 += 1 }
                        return
                    }
                    offset += length
                }
            }
            #expect(failures.withLock { $0 } == 0)
        }
    }

    @Test func originContentChangeNeverMixesOldAndNewBytes() throws {
        let fixture = try LibraryFixture()
        let (item, _) = try oneVideo(fixture, source: "mutable", size: 4 << 20, seed: 1)
        let old = [UInt8](fixture.originBytes(item))
        let new = [UInt8](OfflineTestSupportBytes.generated(size: 4 << 20, seed: 2))
        try withMount(fixture) { (_: MountedLibrary) throws in
            let path = fixture.path("sources/mutable/Video [v].mp4")
            let fd = open(path, O_RDONLY)
            defer { close(fd) }
            var head = [UInt8](repeating: 0, count: 1 << 20)
            #expect(pread(fd, &head, head.count, 0) == head.count)
            // The origin's file changes (same size, new ETag) between two reads.
            let url = try #require(item.mediaURL.flatMap(URL.init(string:)))
            fixture.origin.changeContent(url.path, .generated(size: 4 << 20, seed: 2, contentType: "video/mp4"))
            var tail = [UInt8](repeating: 0, count: 1 << 20)
            let got = pread(fd, &tail, tail.count, 3 << 20)
            // Either an error, or bytes all from one version: never a mix.
            if got == tail.count {
                let fromOld = head == Array(old[0..<(1 << 20)]) && tail == Array(old[(3 << 20)...])
                let fromNew = tail == Array(new[(3 << 20)...])
                #expect(fromOld || fromNew)
            }
        }
    }

    /// A library with one source, `source`, holding one video `v` ("Video [v].mp4") of `size`
    /// generated bytes; the item and the path its media has at the origin.
    private func oneVideo(_ fixture: LibraryFixture, source name: String = "big", size: Int64, seed: UInt64) throws
        -> (item: Item, mediaPath: String) {
        let source = try fixture.addSource(name)
        let item = try #require(try fixture.merge(source, [ItemSpec(contentID: "v", title: "Video", size: size, seed: seed)])["v"])
        return (item, try #require(item.mediaURL.flatMap(URL.init(string:))).path)
    }
}
}

import OfflineTestSupport
import Synchronization

enum OfflineTestSupportBytes {
    static func generated(size: Int64, seed: UInt64) -> Data { TestOrigin.generatedBytes(size: size, seed: seed) }
}
