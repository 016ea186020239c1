import Foundation
import OfflineEngine
import OfflineStore
import OfflineTestSupport
import Testing

/// HLS items played by `ffmpeg` and copied by `tar` and `rsync` through a real mount (DESIGN
/// §3): programs that run in a child process need the kernel. The files they read (playlists,
/// parts, the one-file view, keys) are checked in both setups in HLSFilesTests.
extension RealMounts {
@Suite(.serialized,
       .enabled(if: FUSEAvailability.hasDevFuse, "no /dev/fuse"),
       .enabled(if: FUSEAvailability.hasFusermount, "no fusermount3 in PATH"),
       .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/ffmpeg"), "no ffmpeg (apt-get install ffmpeg)"))
struct HLSMountTests {
    /// `ffmpeg -v error -i <path> -f null -`: decodes every frame; exit 0 and no output when
    /// the stream is complete and playable.
    func play(_ mount: MountedLibrary, _ path: String) throws -> ChildProcess.Result {
        try mount.run(["ffmpeg", "-nostdin", "-v", "error", "-i", path, "-f", "null", "-"], deadline: 60)
    }

    func fileBytes(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

    @Test func anUncachedStreamPlaysFromItsLocalPlaylistAndEveryPartIsTheOriginsBytes() throws {
        let fixture = try LibraryFixture()
        let source = try fixture.addSource("tv")
        let item = try #require(try fixture.merge(source, [ItemSpec(contentID: "news", title: "News", size: 0,
                                                                    categories: [["Daily"]], hlsPlaylist: "ts/master.m3u8")])["news"])
        // ffmpeg plays here as a player would (it is a transcoder by default: its reads are no playback).
        try withMount(fixture, options: ["reader_class=ffmpeg:player"]) { mount in
            let played = try play(mount, fixture.path("sources/tv/News [news].m3u8"))
            #expect(played.status == 0, "ffmpeg: \(played.stderr)")
            #expect(played.stderr.isEmpty, "ffmpeg: \(played.stderr)")
            // The same playlist plays from a category folder: its own .hls folder serves it.
            let fromCategory = try play(mount, fixture.path("categories/Daily/News [news].m3u8"))
            #expect(fromCategory.status == 0, "ffmpeg: \(fromCategory.stderr)")
            // Streaming is not downloading, but it is playing: the parts' reads set last-played.
            #expect(try fixture.current(item).state == .discovered)
            #expect(eventually { try fixture.current(item).lastPlayedAt != nil })
        }
    }

    /// A library just synced, nothing read: the stream's playlist and every part have their
    /// sizes when listed, so `tar` and `rsync` copy them whole; the copy plays with the origin
    /// gone, and a second `rsync` sends nothing.
    @Test func aSyncedStreamCopiedByTarPlaysFromTheCopyAloneWithTheOriginStopped() throws {
        let fixture = try LibraryFixture()
        let item = try fixture.syncedNewsStream()
        let copy = fixture.directory + "/copy", backup = fixture.directory + "/backup"
        for folder in [copy, backup] { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        try withMount(fixture) { mount in
            // Listed with its size before any read: the playlist was fetched at sync.
            let playlist = fixture.path("sources/tv/News [news].m3u8")
            let size = try FileManager.default.attributesOfItem(atPath: playlist)[.size] as? Int
            #expect((size ?? 0) > 0, "playlist listed with size \(String(describing: size))")

            let tar = try mount.run(["sh", "-c", "tar cf - -C \"$0\" sources categories | tar xf - -C \"$1\"",
                                     fixture.mountpoint, copy], deadline: 60)
            #expect(tar.status == 0, "tar: \(tar.stderr)")
            // The parts are in `.hls/<id>/` of both folders that list the item, as one file:
            // `tar` stores them once.
            var copied = stat(), linked = stat()
            #expect(stat(copy + "/sources/tv/.hls/\(item.id)/0.ts", &copied) == 0
                    && stat(copy + "/categories/Daily/.hls/\(item.id)/0.ts", &linked) == 0 && copied.st_ino == linked.st_ino)
            let first = try mount.run(["rsync", "-a", fixture.path("sources") + "/", backup + "/"], deadline: 60)
            #expect(first.status == 0, "rsync: \(first.stderr)")
            let second = try mount.run(["rsync", "-a", "--itemize-changes", fixture.path("sources") + "/", backup + "/"],
                                       deadline: 60)
            #expect(second.status == 0 && second.stdout.isEmpty, "rsync sent again: \(second.stdout)")
            // Streaming is not downloading.
            #expect(try fixture.current(item).state == .discovered)
        }
        fixture.origin.stop()
        for folder in [copy, backup] {
            // Each part is the origin's file (the default variant is the highest).
            for number in 0..<6 {
                let part = fileBytes("\(folder)/tv/.hls/\(item.id)/\(number).ts") ?? fileBytes("\(folder)/sources/tv/.hls/\(item.id)/\(number).ts")
                #expect(part == fileBytes(HLSFixtureFiles.path("ts/high/segment-0\(number).ts")), "\(folder): part \(number)")
            }
        }
        let played = try ChildProcess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", copy + "/sources/tv/News [news].m3u8",
                                           "-f", "null", "-"], deadline: 60)
        #expect(played.status == 0 && played.stderr.isEmpty, "ffmpeg on the copy: \(played.stderr)")
    }

    @Test func aDownloadedStreamIsCachedAndAlsoOneContiguousFile() throws {
        let fixture = try LibraryFixture()
        let source = try fixture.addSource("tv")
        let item = try #require(try fixture.merge(source, [ItemSpec(contentID: "news", title: "News", size: 0,
                                                                    hlsPlaylist: "ts/master.m3u8")])["news"])
        try withMount(fixture, options: ["refresh=100ms"]) { mount in
            #expect(fixture.control("download sources/tv/News [news].m3u8 quality=low\n") == nil)
            #expect(eventually(within: 20) { (try? fixture.current(item).state) == .cached })
            #expect(eventually { names(fixture.path("sources/tv")).contains("News [news].ts") })

            // The low variant's segments end to end (their bytes: HLSFilesTests).
            let playedJoined = try play(mount, fixture.path("sources/tv/News [news].ts"))
            #expect(playedJoined.status == 0, "ffmpeg: \(playedJoined.stderr)")

            // Cached: it plays with the origin gone.
            fixture.origin.goOffline()
            let played = try play(mount, fixture.path("sources/tv/News [news].m3u8"))
            #expect(played.status == 0, "ffmpeg: \(played.stderr)")
        }
    }

    @Test func fragmentedMP4PlaysUncachedAndJoinsInitSegmentAndFragments() throws {
        let fixture = try LibraryFixture()
        let source = try fixture.addSource("tv")
        let item = try #require(try fixture.merge(source, [ItemSpec(contentID: "clip", title: "Clip", size: 0,
                                                                    hlsPlaylist: "fmp4/master.m3u8")])["clip"])
        try withMount(fixture, options: ["refresh=100ms"]) { mount in
            let playlist = fixture.path("sources/tv/Clip [clip].m3u8")
            let uncached = try play(mount, playlist)
            #expect(uncached.status == 0, "ffmpeg: \(uncached.stderr)")

            #expect(fixture.control("download sources/tv/Clip [clip].m3u8\n") == nil)
            #expect(eventually(within: 20) { (try? fixture.current(item).state) == .cached })
            #expect(eventually { names(fixture.path("sources/tv")).contains("Clip [clip].mp4") })
            let joined = try play(mount, fixture.path("sources/tv/Clip [clip].mp4"))
            #expect(joined.status == 0, "ffmpeg: \(joined.stderr)")
        }
    }

    @Test func alternateAudioAndSubtitleRenditionsArePlayedAndDownloadedWithTheVariant() throws {
        let fixture = try LibraryFixture()
        let source = try fixture.addSource("tv")
        let item = try #require(try fixture.merge(source, [ItemSpec(contentID: "talk", title: "Talk", size: 0,
                                                                    hlsPlaylist: "alt/master.m3u8")])["talk"])
        try withMount(fixture, options: ["refresh=100ms"]) { mount in
            let playlist = fixture.path("sources/tv/Talk [talk].m3u8")
            // Played uncached, the sound comes from the audio rendition.
            let probe = try mount.run(["ffprobe", "-v", "error", "-show_entries", "stream=codec_type", "-of", "csv=p=0", playlist])
            #expect(probe.status == 0 && probe.stdout.contains("audio") && probe.stdout.contains("video"),
                    "ffprobe: \(probe.stdout) \(probe.stderr)")
            let played = try play(mount, playlist)
            #expect(played.status == 0, "ffmpeg: \(played.stderr)")

            #expect(fixture.control("download sources/tv/Talk [talk].m3u8\n") == nil)
            #expect(eventually(within: 20) { (try? fixture.current(item).state) == .cached })
            // Offline, the cached tracks still play.
            fixture.origin.goOffline()
            let cached = try play(mount, playlist)
            #expect(cached.status == 0, "ffmpeg: \(cached.stderr)")
        }
    }

    @Test func anEncryptedStreamPlaysWhileItsLicenceHoldsAndItsKeyIsRefusedAfter() throws {
        let fixture = try LibraryFixture()
        let source = try fixture.addSource("tv")
        let rental = LicenceTerms(kind: .rental, rentalDuration: 3600)
        let item = try #require(try fixture.merge(source, [ItemSpec(contentID: "film", title: "Film", size: 0,
                                                                    licence: rental, hlsPlaylist: "aes/index.m3u8")])["film"])
        try withMount(fixture, options: ["refresh=100ms"]) { mount in
            let playlist = fixture.path("sources/tv/Film [film].m3u8")
            // Uncached: the key and the segments are fetched on read.
            let streamed = try play(mount, playlist)
            #expect(streamed.status == 0 && streamed.stderr.isEmpty, "ffmpeg: \(streamed.stderr)")

            #expect(fixture.control("download sources/tv/Film [film].m3u8\n") == nil)
            #expect(eventually(within: 20) { (try? fixture.current(item).state) == .cached })
            let played = try play(mount, playlist)
            #expect(played.status == 0, "ffmpeg: \(played.stderr)")
            let keyPath = fixture.path("sources/tv/.hls/\(item.id)/key")

            // The licence runs out (as the engine's clock would record it).
            var licence = try #require(try fixture.store.licence(itemID: item.id))
            licence.expiresAt = Date().addingTimeInterval(-1)
            try fixture.store.putLicence(licence)
            // The mount sees it with its next tree refresh (100 ms here).
            #expect(eventually {
                let fd = open(keyPath, O_RDONLY)
                let openErrno = errno
                if fd >= 0 { close(fd) }
                return fd < 0 && openErrno == EKEYEXPIRED
            })
            let refused = try play(mount, playlist)
            #expect(refused.status != 0)
        }
    }
}
}

extension LibraryFixture {
    /// Source `tv` with one HLS item, `news` (category Daily), synced without warnings and
    /// nothing of it read: what the stream tests start from.
    func syncedNewsStream() throws -> Item {
        let source = try addSource("tv")
        try publishHLS(source, [ItemSpec(contentID: "news", title: "News", size: 0, categories: [["Daily"]],
                                         hlsPlaylist: "ts/master.m3u8")])
        let reports = try library.sync(sourceName: "tv")
        #expect(reports.map(\.succeeded) == [true], "\(reports.map(\.summary))")
        #expect(reports.first?.warnings == [])
        return try #require(try store.item(source: "tv", contentID: "news"))
    }
}
