import Foundation
import OfflineFUSE
import OfflineStore
import OfflineTestSupport
import Testing

/// The mount as backups see it: times that no download moves, link counts that say an item
/// listed in several folders is one file, and a file system with room left. Kernel-only: the
/// backups are programs (`rsync`, `tar`) reading through the page cache.
extension RealMounts {
@Suite(.serialized,
       .enabled(if: FUSEAvailability.hasDevFuse, "no /dev/fuse"),
       .enabled(if: FUSEAvailability.hasFusermount, "no fusermount3 in PATH"))
struct BackupTests {
    static let published = 1_700_000_000

    @Test func aSecondRsyncOfAnUnchangedLibrarySendsNothing() throws {
        // Given three uncached videos (without side files)
        let fixture = try LibraryFixture()
        let source = try fixture.addSource("acme")
        let items = try fixture.merge(source, (1...3).map {
            ItemSpec(contentID: "v\($0)", title: "Video \($0)", size: Int64($0) * 300_000, seed: UInt64($0))
        })
        try withMount(fixture, options: ["refresh=100ms"]) { (mount: MountedLibrary) throws in
            // When the library is backed up with rsync's defaults: every item streams in
            let backup = fixture.directory + "/backup"
            let first = try mount.run(["rsync", "-a", fixture.path("sources") + "/", backup + "/"], deadline: 60)
            #expect(first.status == 0, "\(first.stderr)")
            for item in items.values {
                let copied = FileManager.default.contents(atPath: backup + "/acme/" + (item.fileName ?? ""))
                #expect(copied == fixture.originBytes(item), "\(item.fileName ?? "")")
            }
            // and becomes cached, as the mount shows
            #expect(eventually { names(fixture.path("state/cached")).count == 3 })
            // Then a second backup finds nothing to send
            let second = try mount.run(["rsync", "-a", "--itemize-changes", fixture.path("sources") + "/", backup + "/"])
            #expect(second.status == 0, "\(second.stderr)")
            #expect(second.stdout.isEmpty, "rsync sent again: \(second.stdout)")
        }
    }

    @Test func statusFilesArchiveWhole() throws {
        let library = try StandardLibrary()
        let fixture = library.fixture
        try withMount(fixture) { (mount: MountedLibrary) throws in
            // When tar, which copies exactly the size stat reports, archives the status files
            let archive = fixture.directory + "/status.tar"
            let tar = try mount.run(["tar", "cf", archive, "-C", fixture.mountpoint, ".status", ".status.json", ".control"])
            #expect(tar.status == 0, "\(tar.stderr)")
            // Then both are there whole: the table with its header and every item line, the JSON parseable
            let table = try mount.run(["tar", "xOf", archive, ".status"]).stdout
            #expect(table.hasPrefix("offlinefs status at"), "\(table)")
            #expect(table.hasSuffix("\n") && table.contains(StandardLibrary.queued), "\(table)")
            let json = try mount.run(["tar", "xOf", archive, ".status.json"]).stdout
            let parsed = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
            #expect((parsed?["items"] as? [Any])?.isEmpty == false, "\(json)")
            // And the control file as it reads: the command reference
            let control = try mount.run(["tar", "xOf", archive, ".control"]).stdout
            let reads = try String(contentsOfFile: fixture.path(".control"), encoding: .utf8)
            #expect(control == reads && control.contains("download <item>"), "\(control)")
        }
    }

    @Test func aTarOfTheWholeMountKeepsOneCopyOfAnItemListedSixTimes() throws {
        // Given one cached item listed in its source, two categories, state/cached, recent/
        // and unwatched/
        let fixture = try LibraryFixture()
        let source = try fixture.addSource("acme")
        let item = try #require(try fixture.merge(source, [
            ItemSpec(contentID: "v", title: "Video", size: 400_000, seed: 3, categories: [["news"], ["family"]]),
        ])["v"])
        try fixture.cache(item)
        try withMount(fixture) { (mount: MountedLibrary) throws in
            // When tar archives the whole mount, then its five other names are links to one copy.
            // (One argument: tar looks for links among separately named files whatever
            // their link count.)
            let archive = fixture.directory + "/backup.tar"
            let tar = try mount.run(["tar", "cf", archive, "-C", fixture.mountpoint, "--exclude=./.*", "."])
            #expect(tar.status == 0, "\(tar.stderr)")
            let listing = try mount.run(["tar", "tvf", archive])
            let names = listing.stdout.split(separator: "\n").filter { $0.contains("Video [v].mp4") }
            #expect(names.count == 6, "\(listing.stdout)")
            #expect(names.filter { $0.contains(" link to ") }.count == 5, "\(listing.stdout)")
        }
    }
}

/// What backups rely on, in both setups: times that no download moves, link counts that say
/// an item listed in several folders is one file, and a file system with room left.
@Suite(.serialized)
struct BackupAttributeTests {
    @Test(arguments: MountSetup.available)
    func timesHoldStillAcrossADownloadAndLinksCountTheFolders(_ setup: MountSetup) throws {
        // Given one uncached item listed in its source and two categories
        let fixture = try LibraryFixture()
        let source = try fixture.addSource("acme")
        let item = try #require(try fixture.merge(source, [
            ItemSpec(contentID: "v", title: "Video", size: 400_000, seed: 3, categories: [["news"], ["family"]]),
        ])["v"])
        try withLibraryMount(setup, fixture, options: ["refresh=100ms"]) { (mount: any LibraryMount) throws in
            let path = "sources/acme/Video [v].mp4"
            let before = try mount.attributes(path)
            #expect(before.modificationTime.seconds == BackupTests.published)
            #expect(before.changeTime.seconds == BackupTests.published)
            #expect(before.linkCount == 3)

            // When it is downloaded (and so also listed in state/cached, recent/ and unwatched/)
            try mount.write(".control", "download \(path)\n")
            #expect(eventually { (try? fixture.current(item).state) == .cached })
            var after = before
            #expect(eventually {
                after = try mount.attributes(path)
                return after.linkCount == 6
            }, "nlink \(after.linkCount)")
            // Then its times have not moved
            #expect(after.modificationTime.seconds == BackupTests.published)
            #expect(after.changeTime.seconds == BackupTests.published)

            // And the file system reports room for more files, not "100 % of inodes used"
            let statistics = try mount.statistics()
            #expect(statistics.totalFiles > 0 && statistics.freeFiles > 0)
        }
    }

    /// A reboot is not a change: a media server that rescans the folders whose time moved
    /// (Kodi) rescans none of them, and a backup finds the hidden files as they were.
    @Test(arguments: MountSetup.available)
    func aRemountOfAnUnchangedLibraryMovesNoFolderTime(_ setup: MountSetup) throws {
        let library = try StandardLibrary()
        let paths = ["", "sources", "sources/acme", "categories/news", "state/cached", "recent", ".control"]
        func times() throws -> [Timestamp] {
            var found: [Timestamp] = []
            try withLibraryMount(setup, library.fixture) { (mount: any LibraryMount) throws in
                found = try paths.map { try mount.attributes($0).modificationTime }
            }
            return found
        }
        let first = try times()
        let second = try times()
        #expect(second == first, "\(first) \(second)")
        // And they are the library's last change, not a time to come
        let last = try #require(try library.fixture.store.lastListingChange())
        #expect(first.allSatisfy { $0.seconds == Int(last.timeIntervalSince1970.rounded(.down)) }, "\(first)")
    }
}
}

/// Every copier users run, with its defaults, on a library just synced with nothing cached:
/// each copy of `sources/` and `categories/` is the origin's, file for file, and exits 0.
extension RealMounts {
@Suite(.serialized,
       .enabled(if: FUSEAvailability.hasDevFuse, "no /dev/fuse"),
       .enabled(if: FUSEAvailability.hasFusermount, "no fusermount3 in PATH"))
struct CopyToolTests {
    static let copiers: [(name: String, command: @Sendable (_ mount: String, _ copy: String) -> [String])] = [
        ("rsync -a", { mount, copy in ["rsync", "-a", mount + "/sources", mount + "/categories", copy + "/"] }),
        ("tar c | tar x", { mount, copy in ["sh", "-c", "tar cf - -C \"$0\" sources categories | tar xf - -C \"$1\"", mount, copy] }),
        ("tar cS | tar x", { mount, copy in ["sh", "-c", "tar cSf - -C \"$0\" sources categories | tar xf - -C \"$1\"", mount, copy] }),
        ("cp -a", { mount, copy in ["cp", "-a", mount + "/sources", mount + "/categories", copy + "/"] }),
        ("shutil.copytree", { mount, copy in
            ["python3", "-c", "import shutil, sys\nfor d in ('sources', 'categories'): shutil.copytree(sys.argv[1] + '/' + d, sys.argv[2] + '/' + d)",
             mount, copy]
        }),
    ]

    @Test(arguments: copiers.indices)
    func aCopyOfAFreshLibraryIsTheOrigins(copier: Int) throws {
        let (name, command) = Self.copiers[copier]
        // Given a library just synced: items with thumbnails and subtitles in categories, nothing cached
        let fixture = try LibraryFixture()
        let source = try fixture.addSource("acme")
        let items = try fixture.merge(source, (1...3).map {
            ItemSpec(contentID: "v\($0)", title: "Video \($0)", size: Int64($0) * 200_000, seed: UInt64($0),
                     categories: [["news"], ["family", "kids"]], thumbnail: true, subtitles: ["en"], sideFileSizes: true)
        })
        var expected: [String: Data] = [:]  // by file name
        for item in items.values {
            let stem = "Video \(item.contentID.dropFirst()) [\(item.contentID)]"
            expected[stem + ".mp4"] = fixture.originBytes(item)
            expected[stem + "-thumb.jpg"] = try fixture.sideFileBytes(item, "thumbnail")
            expected[stem + ".en.vtt"] = try fixture.sideFileBytes(item, "subtitle.en")
        }
        try withMount(fixture) { (mount: MountedLibrary) throws in
            // When it is copied
            let copy = fixture.directory + "/copy"
            try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
            let run = try mount.run(command(fixture.mountpoint, copy), deadline: 60)
            // Then the copier exits 0 and every file in every folder is the origin's
            #expect(run.status == 0, "\(name): \(run.stderr)")
            var checked = 0
            let walker = FileManager.default.enumerator(atPath: copy)
            while let relative = walker?.nextObject() as? String {
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: copy + "/" + relative, isDirectory: &isDirectory), !isDirectory.boolValue
                else { continue }
                let file = (relative as NSString).lastPathComponent
                #expect(FileManager.default.contents(atPath: copy + "/" + relative) == expected[file], "\(name): \(relative)")
                checked += 1
            }
            // (9 files in sources/acme, in categories/news, and in categories/family/kids)
            #expect(checked == 27, "\(name): \(checked) files")
        }
    }
}
}
