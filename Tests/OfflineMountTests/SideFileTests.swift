import Foundation
import OfflineEngine
import OfflineFUSE
import OfflineStore
import OfflineTestSupport
import Synchronization
import Testing

/// Thumbnails and subtitles beside the media, in both setups: listed with their sizes before
/// any read, read whole by every reader the first time too, a wrong stated size corrected.
extension RealMounts {
@Suite(.serialized)
struct SideFileTests {
    /// Two items with a thumbnail and English subtitles whose sizes the catalog states.
    static func statedSizes() throws -> (LibraryFixture, [String: Item]) {
        let fixture = try LibraryFixture()
        let source = try fixture.addSource("acme")
        let items = try fixture.merge(source, (1...2).map {
            ItemSpec(contentID: "v\($0)", title: "Video \($0)", size: 50_000, seed: UInt64($0), thumbnail: true,
                     subtitles: ["en"], sideFileSizes: true)
        })
        return (fixture, items)
    }

    @Test(arguments: MountSetup.available)
    func eightConcurrentFirstReadsOfEverySideFileGetItWholeOnTenFreshMounts(_ setup: MountSetup) throws {
        for round in 1...10 {
            // Given a library just synced, nothing cached
            let library = try StandardLibrary()
            let fixture = library.fixture
            let launch = try #require(library.items["ep-001"])
            let expected: [(path: String, bytes: [UInt8])] = try zip(StandardLibrary.launchSideFiles,
                                                                     ["thumbnail", "subtitle.en", "subtitle.pt-BR"]).map {
                ("sources/acme/\($0.0)", [UInt8](try fixture.sideFileBytes(launch, $0.1)))
            }
            try withLibraryMount(setup, fixture) { (mount: any LibraryMount) throws in
                // When 8 readers read every side file at once, to the end, right after mounting
                let failures = Mutex<[String]>([])
                DispatchQueue.concurrentPerform(iterations: 8 * expected.count) { n in
                    let file = expected[n % expected.count]
                    do {
                        let bytes = try mount.contents(file.path)
                        if bytes != file.bytes { failures.withLock { $0.append("\(file.path): \(bytes.count) bytes, not the origin's") } }
                    } catch {
                        failures.withLock { $0.append("\(file.path): \(error)") }
                    }
                }
                // Then every one of them got the origin's file
                #expect(failures.withLock { $0 }.isEmpty, "mount \(round): \(failures.withLock { $0 })")
            }
        }
    }

    @Test(arguments: MountSetup.available)
    func sideFilesAreListedWithTheirSizesBeforeAnyRead(_ setup: MountSetup) throws {
        // Given items whose side files' sizes the sync found (stated in the catalog), nothing cached
        let (fixture, items) = try Self.statedSizes()
        try withLibraryMount(setup, fixture) { (mount: any LibraryMount) throws in
            // Then a listing shows every side file's real size, before anything read them
            let names = try mount.names("sources/acme")
            for item in items.values {
                let stem = "Video \(item.contentID.dropFirst()) [\(item.contentID)]"
                #expect(names.contains("\(stem)-thumb.jpg") && names.contains("\(stem).en.vtt"), "\(names)")
                #expect(try mount.attributes("sources/acme/\(stem)-thumb.jpg").size
                        == UInt64(try fixture.sideFileBytes(item, "thumbnail").count))
                #expect(try mount.attributes("sources/acme/\(stem).en.vtt").size
                        == UInt64(try fixture.sideFileBytes(item, "subtitle.en").count))
            }
        }
    }

    /// `count` episodes of source `pod` whose feed gives them all the image `/art/show.jpg`,
    /// with their side files' sizes stated; the image's bytes.
    static func episodesSharingOneImage(_ count: Int) throws -> (LibraryFixture, [UInt8]) {
        let fixture = try LibraryFixture()
        let source = try fixture.addSource("pod")
        let items = try fixture.merge(source, (1...count).map {
            ItemSpec(contentID: "e\($0)", title: "Episode \($0)", size: 50_000, seed: UInt64($0),
                     sideFileSizes: true, sharedThumbnail: "/art/show.jpg")
        })
        return (fixture, [UInt8](try fixture.sideFileBytes(try #require(items["e1"]), "thumbnail")))
    }

    /// Episodes sharing one image, each thumbnail read in turn by one process (a thumbnailer
    /// reading one after another), right after a listing loaded every side file's state: the
    /// image is fetched once. The second read may come while the first copy's flush is still
    /// committing it.
    @Test(arguments: MountSetup.available)
    func anEpisodesImageReadRightAfterAnothersIsNotFetchedAgain(_ setup: MountSetup) throws {
        let (fixture, image) = try Self.episodesSharingOneImage(2)
        try withLibraryMount(setup, fixture) { (mount: any LibraryMount) throws in
            for name in try mount.names("sources/pod") { _ = try mount.attributes("sources/pod/\(name)") }
            for n in 1...2 {
                #expect(try mount.contents("sources/pod/Episode \(n) [e\(n)]-thumb.jpg") == image, "episode \(n)")
            }
            let fetches = fixture.origin.requests(for: "/art/show.jpg").filter { $0.method == "GET" }
            #expect(fetches.count == 1, "\(fetches)")
        }
    }

    /// Eight episodes sharing one image, all their thumbnails read at once (a thumbnailer
    /// with eight threads, or the desktop thumbnails of a listing beside a file manager):
    /// one fetch, every copy right.
    @Test(arguments: MountSetup.available)
    func anImageSharedByEpisodesReadAtOnceIsFetchedOnce(_ setup: MountSetup) throws {
        let (fixture, image) = try Self.episodesSharingOneImage(8)
        try withLibraryMount(setup, fixture) { (mount: any LibraryMount) throws in
            let read = Mutex<[Int: [UInt8]]>([:])
            DispatchQueue.concurrentPerform(iterations: 8) { n in
                let bytes = try? mount.contents("sources/pod/Episode \(n + 1) [e\(n + 1)]-thumb.jpg")
                read.withLock { $0[n + 1] = bytes }
            }
            for n in 1...8 { #expect(read.withLock { $0[n] } == image, "episode \(n)") }
            let fetches = fixture.origin.requests(for: "/art/show.jpg").filter { $0.method == "GET" }
            #expect(fetches.count == 1, "\(fetches)")
        }
    }

    @Test(arguments: MountSetup.available)
    func aWrongStatedSideFileSizeIsCorrectedOnceFetched(_ setup: MountSetup) throws {
        // Given a thumbnail whose catalog states a wrong size (10 bytes)
        let fixture = try LibraryFixture()
        let source = try fixture.addSource("acme")
        let item = try #require(try fixture.merge(source, [ItemSpec(contentID: "v1", title: "Video 1", size: 50_000,
                                                                    thumbnail: true, sideFileSizes: true)])["v1"])
        try fixture.store.correctSideFileSize(itemID: item.id, file: "thumbnail", 10)
        let real = try fixture.sideFileBytes(item, "thumbnail")
        try withLibraryMount(setup, fixture, options: ["refresh=100ms"]) { (mount: any LibraryMount) throws in
            let path = "sources/acme/Video 1 [v1]-thumb.jpg"
            #expect(try mount.attributes(path).size == 10)
            // When a program reads it: the whole file comes from the origin
            _ = try mount.contents(path)
            // Then the library records its real size, and listings show it
            #expect(eventually { (try? fixture.current(item).thumbnailSize) == Int64(real.count) })
            #expect(eventually { try mount.attributes(path).size == UInt64(real.count) })
            #expect(try mount.contents(path) == [UInt8](real))
        }
    }

    @Test(arguments: MountSetup.available)
    func aSideFileReadInPartIsNotListedAtTheLengthRead(_ setup: MountSetup) throws {
        // Given a thumbnail whose size nobody stated
        let fixture = try LibraryFixture()
        let source = try fixture.addSource("acme")
        let item = try #require(try fixture.merge(source, [ItemSpec(contentID: "v1", title: "Video 1", size: 50_000,
                                                                    thumbnail: true)])["v1"])
        let real = try fixture.sideFileBytes(item, "thumbnail")
        try withLibraryMount(setup, fixture) { (mount: any LibraryMount) throws in
            let path = "sources/acme/Video 1 [v1]-thumb.jpg"
            // When a program reads its first KiB only (`dd bs=1024 count=1`)
            #expect(try mount.read(path, offset: 0, count: 1024).count == 1024)
            // Then it is not listed as 1 KiB long, and the next reader gets all of it
            #expect(try mount.attributes(path).size != 1024, "listed at the length read")
            #expect(try mount.contents(path) == [UInt8](real))
        }
    }
}

/// Side files read by programs through the kernel: copiers (`rsync`, `cp -a`) copy as many
/// bytes as `stat` says, through the page cache; `ls -l` and `cat` of episodes sharing one
/// image fetch it once.
@Suite(.serialized,
       .enabled(if: FUSEAvailability.hasDevFuse, "no /dev/fuse"),
       .enabled(if: FUSEAvailability.hasFusermount, "no fusermount3 in PATH"))
struct SideFileProgramTests {
    @Test func episodesSharingOneImageFetchItOnceAndKeepOneCacheFile() throws {
        // Given four episodes whose feed gives them all one image, nothing cached
        let fixture = try LibraryFixture()
        let source = try fixture.addSource("pod")
        let items = try fixture.merge(source, (1...4).map {
            ItemSpec(contentID: "e\($0)", title: "Episode \($0)", size: 50_000, seed: UInt64($0),
                     sideFileSizes: true, sharedThumbnail: "/art/show.jpg")
        })
        let image = try fixture.sideFileBytes(try #require(items["e1"]), "thumbnail")
        try withMount(fixture) { (mount: MountedLibrary) throws in
            let thumbnail = { (n: Int) in fixture.path("sources/pod/Episode \(n) [e\(n)]-thumb.jpg") }
            // When the folder is listed (its sizes looked at), then a program reads the first
            // episode's thumbnail, then every other one's
            #expect(try mount.run(["ls", "-l", fixture.path("sources/pod")]).status == 0)
            for n in 1...4 {
                let cat = try mount.run(["cat", thumbnail(n)])
                #expect(cat.status == 0, "\(cat.stderr)")
                #expect(FileManager.default.contents(atPath: thumbnail(n)) == image, "episode \(n)")
            }
            // Then the origin sent the image once, and the cache holds one file, linked four times
            let fetches = fixture.origin.requests(for: "/art/show.jpg").filter { $0.method == "GET" }
            #expect(fetches.count == 1, "\(fetches)")
            let cacheFiles = try (1...4).map { n in
                try FileManager.default.attributesOfItem(atPath: CacheLayout.filePath(
                    library: fixture.library.folder, itemID: try #require(items["e\(n)"]).id, file: "thumbnail"))
            }
            #expect(Set(cacheFiles.map { $0[.systemFileNumber] as? Int }).count == 1)
            #expect(cacheFiles.allSatisfy { $0[.referenceCount] as? Int == 4 })

            // And evicting the first episode with its side files keeps the others' copies
            let evict = try mount.run(["sh", "-c", "echo \"$1\" > \"$2\"", "sh", "evict pod/e1 all", fixture.path(".control")])
            #expect(evict.status == 0, "\(evict.stderr)")
            let kept = CacheLayout.filePath(library: fixture.library.folder, itemID: try #require(items["e2"]).id, file: "thumbnail")
            #expect(eventually { (try? FileManager.default.attributesOfItem(atPath: kept)[.referenceCount] as? Int) == 3 })
            fixture.origin.goOffline()
            #expect(FileManager.default.contents(atPath: thumbnail(2)) == image)
            #expect(FileManager.default.contents(atPath: kept) == image)
            // And the evicted episode's thumbnail links the kept copy again, with the origin gone
            #expect(FileManager.default.contents(atPath: thumbnail(1)) == image)
        }
    }

    @Test func rsyncBacksUpSideFilesWholeBeforeAnyReadAndSendsNothingTheSecondTime() throws {
        // Given items whose side files' sizes the sync found (stated in the catalog), nothing cached
        let (fixture, items) = try SideFileTests.statedSizes()
        try withMount(fixture) { (mount: MountedLibrary) throws in
            // rsync with its defaults copies them whole on the first pass, nothing on the second
            let backup = fixture.directory + "/backup"
            let first = try mount.run(["rsync", "-a", fixture.path("sources/acme") + "/", backup + "/"], deadline: 60)
            #expect(first.status == 0, "\(first.stderr)")
            for item in items.values {
                let stem = "Video \(item.contentID.dropFirst()) [\(item.contentID)]"
                #expect(FileManager.default.contents(atPath: "\(backup)/\(stem)-thumb.jpg") == (try fixture.sideFileBytes(item, "thumbnail")))
                #expect(FileManager.default.contents(atPath: "\(backup)/\(stem).en.vtt") == (try fixture.sideFileBytes(item, "subtitle.en")))
            }
            let second = try mount.run(["rsync", "-a", "--itemize-changes", fixture.path("sources/acme") + "/", backup + "/"])
            #expect(second.status == 0 && second.stdout.isEmpty, "rsync sent again: \(second.stdout)")
        }
    }

    @Test func cpAOfAFreshSourceFolderCopiesEveryFileWholeAndExitsZero() throws {
        // Given a library just synced, nothing of acme's items cached but the three the library caches
        let library = try StandardLibrary()
        let fixture = library.fixture
        try withMount(fixture) { (mount: MountedLibrary) throws in
            // When the source folder is copied with cp -a
            let copy = fixture.directory + "/copy"
            let cp = try mount.run(["cp", "-a", fixture.path("sources/acme"), copy], deadline: 60)
            // Then it exits 0, and every file is the origin's, with the mount's mode and time
            #expect(cp.status == 0, "\(cp.stderr)")
            let launch = try #require(library.items["ep-001"])
            for (name, key) in zip(StandardLibrary.launchSideFiles, ["thumbnail", "subtitle.en", "subtitle.pt-BR"]) {
                #expect(FileManager.default.contents(atPath: copy + "/" + name) == (try fixture.sideFileBytes(launch, key)), "\(name)")
            }
            for (name, id) in [(StandardLibrary.launch, "ep-001"), (StandardLibrary.remote, "ep-004"), (StandardLibrary.tiny, "ep-002")] {
                let item = try #require(library.items[id])
                #expect(FileManager.default.contents(atPath: copy + "/" + name) == fixture.originBytes(item), "\(name)")
                var info = stat()
                #expect(stat(copy + "/" + name, &info) == 0 && info.st_mode & 0o777 == 0o644 && Int(info.st_mtim.tv_sec) == 1_700_000_000)
            }
        }
    }
}
}
