import Foundation
import OfflineEngine
import OfflineStore
import OfflineTestSupport
import Testing

/// HLS items in a real mount (DESIGN §3), played by `ffmpeg` from the ffmpeg-made fixtures:
/// the local playlist, `.hls/<id>/` parts fetched on read, the one-file view of a cached
/// stream, and keys refused after the licence expires.
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
        try withMount(fixture) { mount in
            let playlistPath = fixture.path("sources/tv/News [news].m3u8")
            let played = try play(mount, playlistPath)
            #expect(played.status == 0, "ffmpeg: \(played.stderr)")
            #expect(played.stderr.isEmpty, "ffmpeg: \(played.stderr)")

            // The local playlist names only files inside the mount, relative to its folder.
            let text = String(decoding: try #require(fileBytes(playlistPath)), as: UTF8.self)
            let uris = text.split(separator: "\n").filter { !$0.hasPrefix("#") }
            #expect(uris.count == 6)
            #expect(uris.allSatisfy { $0.hasPrefix(".hls/\(item.id)/") }, "\(text)")
            #expect(text.contains("#EXT-X-ENDLIST"))

            // The default variant is the highest; each part is its origin file, byte for byte.
            for name in (0..<6).map({ "\($0).ts" }) {
                let part = fileBytes(fixture.path("sources/tv/.hls/\(item.id)/\(name)"))
                let origin = fileBytes(HLSFixtureFiles.path("ts/high/segment-0\(name.dropLast(3)).ts"))
                #expect(part != nil && part == origin, "part \(name)")
            }
            // The same playlist plays from a category folder: its own .hls folder serves it.
            let fromCategory = try play(mount, fixture.path("categories/Daily/News [news].m3u8"))
            #expect(fromCategory.status == 0, "ffmpeg: \(fromCategory.stderr)")
            #expect(names(fixture.path("categories/Daily/.hls")) == ["\(item.id)"])
            // Streaming is not downloading: nothing was asked, so no one-file view.
            #expect(try fixture.current(item).state == .discovered)
            #expect(!names(fixture.path("sources/tv")).contains("News [news].ts"))
        }
    }

    /// A library just synced, nothing read: the stream's playlist and every part have their
    /// sizes when listed, so `tar` and `rsync` copy them whole; the copy plays with the origin
    /// gone, and a second `rsync` sends nothing.
    @Test func aSyncedStreamCopiedByTarPlaysFromTheCopyAloneWithTheOriginStopped() throws {
        let fixture = try LibraryFixture()
        let source = try fixture.addSource("tv")
        try fixture.publishHLS(source, [ItemSpec(contentID: "news", title: "News", size: 0, categories: [["Daily"]],
                                                 hlsPlaylist: "ts/master.m3u8")])
        let reports = try fixture.library.sync(sourceName: "tv")
        #expect(reports.map(\.succeeded) == [true], "\(reports.map(\.summary))")
        #expect(reports.first?.warnings == [])
        let item = try #require(try fixture.store.item(source: "tv", contentID: "news"))
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
            // `du` counts them once and `tar` stores them once.
            var info = stat()
            #expect(stat(fixture.path("categories/Daily/.hls/\(item.id)/0.ts"), &info) == 0 && info.st_nlink == 2)
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
            // Evicting it (rm) keeps its playlists: it is still listed with its size, which a
            // player needs (a 0-byte playlist made mpv wait 6 s for it to grow).
            #expect(unlink(playlist) == 0)
            #expect(waitUntil { (try? FileManager.default.attributesOfItem(atPath: playlist)[.size] as? Int) == size })
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
            #expect(waitUntil(seconds: 20) { (try? fixture.current(item).state) == .cached })
            #expect(waitUntil { names(fixture.path("sources/tv")).contains("News [news].ts") })

            // The low variant's segments end to end, with an exact size.
            let segments = (0..<6).map { HLSFixtureFiles.path("ts/low/segment-0\($0).ts") }
            let expected = segments.reduce(into: Data()) { $0 += fileBytes($1) ?? Data() }
            let joinedPath = fixture.path("sources/tv/News [news].ts")
            let attributes = try FileManager.default.attributesOfItem(atPath: joinedPath)
            #expect((attributes[.size] as? Int) == expected.count)
            #expect(fileBytes(joinedPath) == expected)
            #expect(try fixture.current(item).size == Int64(expected.count))
            let playedJoined = try play(mount, joinedPath)
            #expect(playedJoined.status == 0, "ffmpeg: \(playedJoined.stderr)")

            // Cached: it plays with the origin gone.
            fixture.origin.goOffline()
            let played = try play(mount, fixture.path("sources/tv/News [news].m3u8"))
            #expect(played.status == 0, "ffmpeg: \(played.stderr)")
            let segmentsAttribute = try mount.run(["getfattr", "--only-values", "-n", "user.offline.segments",
                                                   fixture.path("sources/tv/News [news].m3u8")])
            #expect(segmentsAttribute.stdout == "6/6")
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
            #expect(names(fixture.path("sources/tv/.hls/\(item.id)")).contains("init.mp4"))

            #expect(fixture.control("download sources/tv/Clip [clip].m3u8\n") == nil)
            #expect(waitUntil(seconds: 20) { (try? fixture.current(item).state) == .cached })
            #expect(waitUntil { names(fixture.path("sources/tv")).contains("Clip [clip].mp4") })
            let parts = ["init.mp4"] + (0..<4).map { "segment-0\($0).m4s" }
            let expected = parts.reduce(into: Data()) { $0 += fileBytes(HLSFixtureFiles.path("fmp4/\($1)")) ?? Data() }
            #expect(fileBytes(fixture.path("sources/tv/Clip [clip].mp4")) == expected)
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
            // The item's file is a master playlist naming local track playlists.
            let text = String(decoding: try #require(fileBytes(playlist)), as: UTF8.self)
            #expect(text.contains("#EXT-X-MEDIA:TYPE=AUDIO") && text.contains("URI=\".hls/\(item.id)/audio.m3u8\""), "\(text)")
            #expect(text.contains("#EXT-X-MEDIA:TYPE=SUBTITLES"), "\(text)")
            // Played uncached, the sound comes from the audio rendition.
            let probe = try mount.run(["ffprobe", "-v", "error", "-show_entries", "stream=codec_type", "-of", "csv=p=0", playlist])
            #expect(probe.status == 0 && probe.stdout.contains("audio") && probe.stdout.contains("video"),
                    "ffprobe: \(probe.stdout) \(probe.stderr)")
            let played = try play(mount, playlist)
            #expect(played.status == 0, "ffmpeg: \(played.stderr)")

            #expect(fixture.control("download sources/tv/Talk [talk].m3u8\n") == nil)
            #expect(waitUntil(seconds: 20) { (try? fixture.current(item).state) == .cached })
            let folder = fixture.path("sources/tv/.hls/\(item.id)")
            let listed = names(folder)
            #expect(listed.isSuperset(of: ["video.m3u8", "audio.m3u8", "subtitles-1.m3u8", "audio-0.ts", "subtitles-1-0.vtt"]),
                    "\(listed.sorted())")
            #expect(fileBytes(folder + "/audio-0.ts") == fileBytes(HLSFixtureFiles.path("alt/audio/segment-00.ts")))
            #expect(fileBytes(folder + "/subtitles-1-0.vtt") == fileBytes(HLSFixtureFiles.path("alt/video/index0.vtt")))
            // Offline, the cached tracks still play; no one-file view (it would have no sound).
            fixture.origin.goOffline()
            let cached = try play(mount, playlist)
            #expect(cached.status == 0, "ffmpeg: \(cached.stderr)")
            #expect(!names(fixture.path("sources/tv")).contains("Talk [talk].ts"))
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
            #expect(waitUntil(seconds: 20) { (try? fixture.current(item).state) == .cached })
            let played = try play(mount, playlist)
            #expect(played.status == 0, "ffmpeg: \(played.stderr)")
            // Segments stay encrypted in the cache; the key lives with the licence.
            let keyPath = fixture.path("sources/tv/.hls/\(item.id)/key")
            #expect(fileBytes(keyPath) == fileBytes(HLSFixtureFiles.path("aes/key.bin")))
            #expect(try fixture.store.licence(itemID: item.id)?.key == fileBytes(HLSFixtureFiles.path("aes/key.bin")))
            #expect(fileBytes(fixture.path("sources/tv/.hls/\(item.id)/0.ts")) == fileBytes(HLSFixtureFiles.path("aes/segment-00.ts")))
            // No one-file view of an encrypted stream (it would be clear bytes outside the licence).
            #expect(!names(fixture.path("sources/tv")).contains("Film [film].ts"))

            // The licence runs out (as the engine's clock would record it).
            var licence = try #require(try fixture.store.licence(itemID: item.id))
            licence.expiresAt = Date().addingTimeInterval(-1)
            try fixture.store.putLicence(licence)
            // The mount sees it with its next tree refresh (100 ms here).
            #expect(waitUntil {
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
