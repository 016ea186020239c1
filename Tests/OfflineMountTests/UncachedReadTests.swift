import Foundation
import OfflineEngine
import OfflineFUSE
import OfflineTestSupport
import OfflineStore
import Testing

/// Reads of bytes that are not in the cache, in both setups: streamed from the origin through
/// the engine, checked against the origin's bytes; read-ahead that stops at the last close, a
/// far seek answered at once, the connection opened ahead of the first read.
extension RealMounts {
@Suite(.serialized)
struct UncachedReadTests {
    @Test(arguments: MountSetup.available)
    func readingAllOfAnUncachedItemStreamsTheOriginsBytesAndTheItemBecomesCached(_ setup: MountSetup) throws {
        let library = try StandardLibrary()
        let fixture = library.fixture
        let item = library.items["ep-004"]!
        try withLibraryMount(setup, fixture, options: ["refresh=100ms"]) { (mount: any LibraryMount) throws in
            #expect(try mount.contents("sources/acme/\(StandardLibrary.remote)") == [UInt8](fixture.originBytes(item)))
            // Every byte arrived: the item is cached, and the mount shows it so.
            #expect(eventually { (try? fixture.store.item(id: item.id)?.state) == .cached })
            #expect(eventually { try mount.names("state/cached").contains(StandardLibrary.remote) })
        }
    }

    /// A reader that proved sequential got read-ahead megabytes beyond its reads; once it
    /// closes, the origin sends nothing more for it (issue 22: no transfer still sending 1 s
    /// after the last reader closed).
    @Test(arguments: MountSetup.available)
    func readAheadStopsWhenTheLastReaderCloses(_ setup: MountSetup) throws {
        let fixture = try LibraryFixture()
        let source = try fixture.addSource("acme")
        let item = try #require(try fixture.merge(source, [ItemSpec(contentID: "big", title: "Big", size: 64 << 20, seed: 9)])["big"])
        let path = try #require(item.mediaURL.flatMap(URL.init(string:))).path
        fixture.origin.setFault(path, .trickle(bytesPerSecond: 4 << 20))
        try withLibraryMount(setup, fixture) { (mount: any LibraryMount) throws in
            // When a reader reads the first 6 MiB in order (its read-ahead grows to 8 MiB) and
            // closes (`head -c 6291456`)
            let file = try mount.open("sources/acme/Big [big].mp4")
            var read = 0
            while read < 6 << 20 {
                let chunk = try file.read(offset: Int64(read), count: 128 << 10)
                if chunk.isEmpty { break }
                read += chunk.count
            }
            file.close()
            #expect(read == 6 << 20)
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
    @Test(arguments: MountSetup.available)
    func aFarSeekDuringADownloadWithTwoReadersIsAnsweredAtOnce(_ setup: MountSetup) throws {
        let fixture = try LibraryFixture()
        let source = try fixture.addSource("acme")
        let size: Int64 = 64 << 20
        let item = try #require(try fixture.merge(source, [ItemSpec(contentID: "big", title: "Big", size: size, seed: 21)])["big"])
        let path = try #require(item.mediaURL.flatMap(URL.init(string:))).path
        fixture.origin.setFault(path, .trickle(bytesPerSecond: 2 << 20))
        try withLibraryMount(setup, fixture) { (mount: any LibraryMount) throws in
            let file = "sources/acme/Big [big].mp4"
            try mount.write(".control", "download \(file)\n")
            #expect(eventually { (try? fixture.current(item).state) == .downloading })
            // Two readers stream it from the start (`dd bs=1M`) until the test ends.
            let readers = DispatchGroup(), stop = StopFlag()
            for _ in 0..<2 {
                let open = try mount.open(file)
                DispatchQueue.global().async(group: readers) {
                    var offset: Int64 = 0
                    while !stop.isRaised, let chunk = try? open.read(offset: offset, count: 1 << 20), !chunk.isEmpty {
                        offset += Int64(chunk.count)
                    }
                    open.close()
                }
            }
            defer {
                stop.raise()
                readers.wait()
            }
            // When a player seeks to 80 % and reads 64 KiB
            let offset = size * 8 / 10
            let started = ContinuousClock.now
            let player = try mount.open(file)
            defer { player.close() }
            let bytes = try player.read(offset: offset, count: 65_536)
            let waited = ContinuousClock.now - started
            // Then the bytes are the origin's, within a second
            #expect(bytes == [UInt8](fixture.originBytes(item)[Int(offset)..<Int(offset) + 65_536]))
            #expect(waited < .seconds(1), "the seek waited \(waited)")
        }
    }

    @Test(arguments: MountSetup.available)
    func openingAnUncachedItemFetchesItsStartBeforeTheFirstRead(_ setup: MountSetup) throws {
        let fixture = try LibraryFixture()
        let (item, mediaPath) = try Self.oneVideo(fixture, size: 8 << 20, seed: 12)
        try withLibraryMount(setup, fixture) { (mount: any LibraryMount) throws in
            let file = try mount.open("sources/big/Video [v].mp4")
            defer { file.close() }
            // Opened, not read yet: the origin is already asked for the file's start.
            #expect(eventually { !fixture.origin.requests(for: mediaPath).isEmpty })
            #expect(fixture.origin.requests(for: mediaPath).first?.header("range")?.hasPrefix("bytes=0-") == true)
            // And the first read gets the origin's bytes.
            #expect(try file.read(offset: 0, count: 65_536) == [UInt8](fixture.originBytes(item).prefix(65_536)))
        }
    }

    @Test(arguments: MountSetup.available)
    func listingAFolderOpensAConnectionToItsItemsOriginAheadOfTheFirstRead(_ setup: MountSetup) throws {
        let fixture = try LibraryFixture()
        let (item, mediaPath) = try Self.oneVideo(fixture, size: 1 << 20, seed: 13)
        try withLibraryMount(setup, fixture) { (mount: any LibraryMount) throws in
            // When a file manager shows the item's folder
            #expect(try mount.names("sources/big").contains("Video [v].mp4"))
            // Then the origin gets one HEAD for the item (a connection for the read to come)
            // The warm-up runs on a background thread after the mount starts; on a loaded
            // two-core machine that took up to 10 s, hence the wide bound.
            #expect(eventually(within: 30) { fixture.origin.requests(for: mediaPath).map(\.method) == ["HEAD"] },
                    "\(fixture.origin.requests(for: mediaPath))")
            // And the folder shown again, then the item read: its bytes, and no second HEAD
            _ = try mount.names("sources/big")
            #expect(try mount.contents("sources/big/Video [v].mp4") == [UInt8](fixture.originBytes(item)))
            let requests = fixture.origin.requests(for: mediaPath)
            #expect(requests.filter { $0.method == "HEAD" }.count == 1, "\(requests)")
        }
    }

    @Test(arguments: MountSetup.available)
    func randomReadsOfAnUncachedItemMatchTheOrigin(_ setup: MountSetup) throws {
        let fixture = try LibraryFixture()
        let (item, _) = try Self.oneVideo(fixture, size: 24 << 20, seed: 99)
        let expected = [UInt8](fixture.originBytes(item))
        try withLibraryMount(setup, fixture) { (mount: any LibraryMount) throws in
            let path = "sources/big/Video [v].mp4"
            #expect(try mount.attributes(path).size == UInt64(expected.count))
            let file = try mount.open(path)
            defer { file.close() }
            var random = SplitMix(seed: 7)
            for _ in 0..<200 {
                let offset = Int(random.next() % UInt64(expected.count))
                let length = Int(random.next() % 300_000) + 1
                let got = try file.read(offset: Int64(offset), count: length)
                let want = min(length, expected.count - offset)
                #expect(got.count == want, "read at \(offset) of \(length)")
                if got.count == want && got[...] != expected[offset..<offset + want] {
                    Issue.record("read at \(offset) of \(length): bytes differ")
                    return
                }
            }
        }
    }

    @Test(arguments: MountSetup.available)
    func eightConcurrentReadersWhileTheFileFillsGetTheOriginsBytes(_ setup: MountSetup) throws {
        let fixture = try LibraryFixture()
        let (item, _) = try Self.oneVideo(fixture, size: 32 << 20, seed: 5)
        let expected = [UInt8](fixture.originBytes(item))
        try withLibraryMount(setup, fixture) { (mount: any LibraryMount) throws in
            let path = "sources/big/Video [v].mp4"
            let failures = Mutex(0)
            DispatchQueue.concurrentPerform(iterations: 8) { reader in
                guard let file = try? mount.open(path) else { return failures.withLock { $0 += 1 } }
                defer { file.close() }
                let chunk = expected.count / 8
                var random = SplitMix(seed: UInt64(reader))
                var offset = chunk * reader
                while offset < chunk * (reader + 1) {
                    let length = Int(random.next() % 200_000) + 1
                    let got = (try? file.read(offset: Int64(offset), count: length)) ?? []
                    let want = min(length, expected.count - offset)
                    if got.count != want || got[...] != expected[offset..<offset + want] {
                        failures.withLock { $0 += 1 }
                        return
                    }
                    offset += length
                }
            }
            #expect(failures.withLock { $0 } == 0)
        }
    }

    /// An open that read the old version's bytes never gets the new version's after them
    /// (a player's file stays one version): its reads fail once the origin's file changed.
    @Test(arguments: MountSetup.available)
    func originContentChangeNeverMixesOldAndNewBytes(_ setup: MountSetup) throws {
        let fixture = try LibraryFixture()
        let size: Int64 = 32 << 20
        let (item, path) = try Self.oneVideo(fixture, source: "mutable", size: size, seed: 1)
        let old = [UInt8](fixture.originBytes(item)), new = [UInt8](OfflineTestSupportBytes.generated(size: size, seed: 2))
        let name = "sources/mutable/Video [v].mp4"
        try withLibraryMount(setup, fixture) { (mount: any LibraryMount) throws in
            // Given the first MiB cached by an earlier reader (a slow origin: not much more)
            fixture.origin.setFault(path, .trickle(bytesPerSecond: 4 << 20))
            let first = try mount.open(name)
            _ = try first.read(offset: 0, count: 1 << 20)
            first.close()
            // When the origin's file changes and a reader reads the cached start, then the rest
            fixture.origin.clearFaults()
            fixture.origin.changeContent(path, .generated(size: size, seed: 2, contentType: "video/mp4"))
            let file = try mount.open(name)
            let head = try file.read(offset: 0, count: 1 << 20)
            let tail = (try? file.read(offset: 28 << 20, count: 1 << 20)) ?? []
            file.close()
            // Then it had the old start, and the rest is an error, not the new version's bytes
            let headIsOld = head == Array(old[0..<(1 << 20)]), tailIsOld = tail == Array(old[(28 << 20)..<(29 << 20)])
            #expect(headIsOld)
            #expect(tail.isEmpty || tailIsOld, "\(tail == Array(new[(28 << 20)..<(29 << 20)]) ? "new" : "other") bytes")
            // And the event log says why its reads failed (the program only got EIO)
            if tail.isEmpty {
                #expect(eventually(within: 10) {
                    try fixture.store.events(after: 0, limit: 1000).contains {
                        $0.kind == .error && $0.itemID == item.id && $0.message.contains("changed while it was open")
                    }
                })
            }
            // And a new open reads the new version
            let again = try mount.open(name)
            defer { again.close() }
            let start = try again.read(offset: 0, count: 1 << 20), end = try again.read(offset: 28 << 20, count: 1 << 20)
            let startIsNew = start == Array(new[0..<(1 << 20)]), endIsNew = end == Array(new[(28 << 20)..<(29 << 20)])
            #expect(startIsNew && endIsNew)
        }
    }

    /// A catalog that states a media size wrong (a feed's enclosure length often is): the
    /// first read of the item already gets the origin's whole file, not one cut at the
    /// stated size (`cp` would copy it short, exit 0), and listings then show the origin's.
    /// Through the kernel, an uncached item's open is `direct_io` where the kernel allows
    /// mmap of those (6.6 on), else page-cache, where the kernel ends reads at the size it
    /// holds: the mount drops it before the answer that learned another (tried both here).
    @Test(arguments: MountSetup.available, [(stated: 1_000_000, origin: 1_200_000), (1, 1_200_000), (1_200_000, 1_000_000)])
    func theFirstReadOfAnItemWhoseCatalogSizeIsWrongGetsTheOriginsFile(_ setup: MountSetup, sizes: (stated: Int64, origin: Int64)) throws {
        let fixture = try LibraryFixture()
        let source = try fixture.addSource("wrong")
        let item = try #require(try fixture.merge(source, [ItemSpec(contentID: "v", title: "Video", size: sizes.stated, seed: 3)])["v"])
        let path = try #require(item.mediaURL.flatMap(URL.init(string:))).path
        fixture.origin.serve(path, .generated(size: sizes.origin, seed: 3, contentType: "video/mp4"))
        let origin = TestOrigin.generatedBytes(size: sizes.origin, seed: 3)
        let name = "sources/wrong/Video [v].mp4"
        try withLibraryMount(setup, fixture) { (mount: any LibraryMount) throws in
            let first = Data(try mount.contents(name))
            let whole = first == origin
            #expect(whole, "\(first.count) bytes")
            // A next open's first read is not cut at the catalog's size either (`rsync` reads
            // the size it was told and nothing past a short read).
            let start = try mount.read(name, offset: 0, count: 65_536)
            #expect(Data(start) == origin.prefix(65_536), "\(start.count) bytes")
            // And a sync that states the wrong size again (once the bytes read are claimed, with
            // the origin's version) changes nothing: the listing and a copy keep the origin's
            #expect(eventually(within: 10) { try fixture.store.item(id: item.id)?.size == sizes.origin })
            #expect(eventually(within: 10) { try !fixture.store.presentRanges(itemID: item.id, file: "media").isEmpty })
            let stated = CatalogEntry(contentID: "v", title: "Video", type: .video, mediaURL: try #require(item.mediaURL),
                                      size: sizes.stated, mimeType: item.mimeType)
            _ = try fixture.store.mergeCatalog(sourceID: source.id, title: nil, entries: [stated], isComplete: false, now: Date())
            #expect(try fixture.store.item(id: item.id)?.size == sizes.origin)
            let again = Data(try mount.contents(name))
            #expect(again == origin, "\(again.count) bytes")
            #expect(try mount.attributes(name).size == UInt64(sizes.origin))
            #expect(eventually(within: 10) { try mount.attributes(name).size == UInt64(sizes.origin) })
        }
    }

    /// A library with one source, `source`, holding one video `v` ("Video [v].mp4") of `size`
    /// generated bytes; the item and the path its media has at the origin.
    static func oneVideo(_ fixture: LibraryFixture, source name: String = "big", size: Int64, seed: UInt64) throws
        -> (item: Item, mediaPath: String) {
        let source = try fixture.addSource(name)
        let item = try #require(try fixture.merge(source, [ItemSpec(contentID: "v", title: "Video", size: size, seed: seed)])["v"])
        return (item, try #require(item.mediaURL.flatMap(URL.init(string:))).path)
    }
}

/// `mmap` of an uncached item: page faults are the kernel's reads, so this needs a real mount.
@Suite(.serialized,
       .enabled(if: FUSEAvailability.hasDevFuse, "no /dev/fuse"),
       .enabled(if: FUSEAvailability.hasFusermount, "no fusermount3 in PATH"))
struct UncachedMappedReadTests {
    @Test func randomPreadAndMmapOfAnUncachedItemMatchTheOrigin() throws {
        let fixture = try LibraryFixture()
        let (item, _) = try UncachedReadTests.oneVideo(fixture, size: 24 << 20, seed: 99)
        try withMount(fixture) { (_: MountedLibrary) throws in
            try checkRandomReads(path: fixture.path("sources/big/Video [v].mp4"),
                                 expected: [UInt8](fixture.originBytes(item)), seed: 7, count: 200)
        }
    }
}
}

import OfflineTestSupport
import Synchronization

/// Tells threads a test started to stop.
final class StopFlag: Sendable {
    private let raised = Atomic(false)
    func raise() { raised.store(true, ordering: .relaxed) }
    var isRaised: Bool { raised.load(ordering: .relaxed) }
}

enum OfflineTestSupportBytes {
    static func generated(size: Int64, seed: UInt64) -> Data { TestOrigin.generatedBytes(size: size, seed: seed) }
}
