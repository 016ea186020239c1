import Foundation
import OfflineEngine
import OfflineFUSE
import OfflineStore
import OfflineTestSupport
import Testing

/// HLS items' files in both setups (DESIGN §3), from the ffmpeg-made fixtures: the local
/// playlist, `.hls/<id>/` parts that are the origin's bytes, their sizes before any read, the
/// one-file view of a cached stream, and keys refused after the licence expires. That players
/// and copiers get the same through the kernel is in HLSMountTests.
extension RealMounts {
@Suite(.serialized)
struct HLSFilesTests {
    func originFile(_ relative: String) -> [UInt8]? {
        FileManager.default.contents(atPath: HLSFixtureFiles.path(relative)).map { [UInt8]($0) }
    }

    @Test(arguments: MountSetup.available)
    func anUncachedStreamsPlaylistNamesItsPartsAndEachIsTheOriginsBytes(_ setup: MountSetup) throws {
        let fixture = try LibraryFixture()
        let source = try fixture.addSource("tv")
        let item = try #require(try fixture.merge(source, [ItemSpec(contentID: "news", title: "News", size: 0,
                                                                    categories: [["Daily"]], hlsPlaylist: "ts/master.m3u8")])["news"])
        try withLibraryMount(setup, fixture) { (mount: any LibraryMount) throws in
            // The local playlist names only files inside the mount, relative to its folder.
            let text = String(decoding: try mount.contents("sources/tv/News [news].m3u8"), as: UTF8.self)
            let uris = text.split(separator: "\n").filter { !$0.hasPrefix("#") }
            #expect(uris.count == 6)
            #expect(uris.allSatisfy { $0.hasPrefix(".hls/\(item.id)/") }, "\(text)")
            #expect(text.contains("#EXT-X-ENDLIST"))

            // The default variant is the highest; each part is its origin file, byte for byte.
            for number in 0..<6 {
                let part = try mount.contents("sources/tv/.hls/\(item.id)/\(number).ts")
                #expect(part == originFile("ts/high/segment-0\(number).ts"), "part \(number)")
            }
            // The same playlist reads from a category folder: its own .hls folder serves it.
            #expect(try mount.contents("categories/Daily/News [news].m3u8") == Array(text.utf8))
            #expect(try mount.names("categories/Daily/.hls") == ["\(item.id)"])
            #expect(try mount.contents("categories/Daily/.hls/\(item.id)/5.ts") == originFile("ts/high/segment-05.ts"))
            // Streaming is not downloading: nothing was asked, so no one-file view.
            #expect(try fixture.current(item).state == .discovered)
            #expect(try !mount.names("sources/tv").contains("News [news].ts"))
            // A part is not removable (EPERM, as side files); a name that is no part is absent.
            #expect(throws: Errno.notPermitted) { try mount.remove("sources/tv/.hls/\(item.id)/0.ts") }
            #expect(throws: Errno.noSuchFileOrDirectory) { try mount.remove("sources/tv/.hls/\(item.id)/99.ts") }
        }
    }

    /// A library just synced, nothing read: the stream's playlist and every part have their
    /// sizes when listed (what lets `tar` and `rsync` copy them whole).
    @Test(arguments: MountSetup.available)
    func aSyncedStreamIsListedWithItsSizesBeforeAnyRead(_ setup: MountSetup) throws {
        let fixture = try LibraryFixture()
        let item = try fixture.syncedNewsStream()
        try withLibraryMount(setup, fixture, options: ["refresh=100ms"]) { (mount: any LibraryMount) throws in
            // Listed with its size before any read: the playlist was fetched at sync.
            let playlist = "sources/tv/News [news].m3u8"
            let size = try mount.attributes(playlist).size
            #expect(size > 0, "playlist listed with size \(size)")

            // Each part listed with its origin file's size (the default variant is the highest).
            let parts = "sources/tv/.hls/\(item.id)"
            #expect(Set(try mount.names(parts)).isSuperset(of: (0..<6).map { "\($0).ts" }))
            for number in 0..<6 {
                #expect(try mount.attributes("\(parts)/\(number).ts").size == UInt64(originFile("ts/high/segment-0\(number).ts")?.count ?? 0),
                        "part \(number)")
            }
            // The parts are in `.hls/<id>/` of both folders that list the item, as one file:
            // `du` counts them once and `tar` stores them once.
            let inSource = try mount.attributes("\(parts)/0.ts")
            let inCategory = try mount.attributes("categories/Daily/.hls/\(item.id)/0.ts")
            #expect(inCategory.linkCount == 2 && inCategory.inode == inSource.inode)
            // Streaming is not downloading.
            #expect(try fixture.current(item).state == .discovered)
            // Evicting it (rm) keeps its playlists: it is still listed with its size, which a
            // player needs (a 0-byte playlist made mpv wait 6 s for it to grow).
            try mount.remove(playlist)
            #expect(eventually { try mount.attributes(playlist).size == size })
        }
    }

    @Test(arguments: MountSetup.available)
    func aDownloadedStreamIsCachedAndAlsoOneContiguousFile(_ setup: MountSetup) throws {
        let fixture = try LibraryFixture()
        let source = try fixture.addSource("tv")
        let item = try #require(try fixture.merge(source, [ItemSpec(contentID: "news", title: "News", size: 0,
                                                                    hlsPlaylist: "ts/master.m3u8")])["news"])
        try withLibraryMount(setup, fixture, options: ["refresh=100ms"]) { (mount: any LibraryMount) throws in
            try mount.write(".control", "download sources/tv/News [news].m3u8 quality=low\n")
            #expect(eventually(within: 20) { (try? fixture.current(item).state) == .cached })
            #expect(eventually { try mount.names("sources/tv").contains("News [news].ts") })

            // The low variant's segments end to end, with an exact size.
            let expected = (0..<6).reduce(into: [UInt8]()) { $0 += originFile("ts/low/segment-0\($1).ts") ?? [] }
            let joined = "sources/tv/News [news].ts"
            #expect(try mount.attributes(joined).size == UInt64(expected.count))
            #expect(try mount.contents(joined) == expected)
            #expect(try fixture.current(item).size == Int64(expected.count))

            // Cached: the playlist and the parts it names read with the origin gone.
            fixture.origin.goOffline()
            let text = String(decoding: try mount.contents("sources/tv/News [news].m3u8"), as: UTF8.self)
            let uris = text.split(separator: "\n").filter { !$0.hasPrefix("#") }
            #expect(uris.count == 6)
            #expect(try uris.reduce(into: [UInt8]()) { $0 += try mount.contents("sources/tv/\($1)") } == expected)
            #expect(try mount.xattr("sources/tv/News [news].m3u8", "user.offline.segments") == "6/6")
        }
    }

    @Test(arguments: MountSetup.available)
    func fragmentedMP4JoinsItsInitSegmentAndFragments(_ setup: MountSetup) throws {
        let fixture = try LibraryFixture()
        let source = try fixture.addSource("tv")
        let item = try #require(try fixture.merge(source, [ItemSpec(contentID: "clip", title: "Clip", size: 0,
                                                                    hlsPlaylist: "fmp4/master.m3u8")])["clip"])
        try withLibraryMount(setup, fixture, options: ["refresh=100ms"]) { (mount: any LibraryMount) throws in
            // Uncached, the playlist names the init segment, which reads as the origin's.
            let text = String(decoding: try mount.contents("sources/tv/Clip [clip].m3u8"), as: UTF8.self)
            #expect(text.contains(".hls/\(item.id)/init.mp4"), "\(text)")
            #expect(try mount.names("sources/tv/.hls/\(item.id)").contains("init.mp4"))
            #expect(try mount.contents("sources/tv/.hls/\(item.id)/init.mp4") == originFile("fmp4/init.mp4"))

            try mount.write(".control", "download sources/tv/Clip [clip].m3u8\n")
            #expect(eventually(within: 20) { (try? fixture.current(item).state) == .cached })
            #expect(eventually { try mount.names("sources/tv").contains("Clip [clip].mp4") })
            let parts = ["init.mp4"] + (0..<4).map { "segment-0\($0).m4s" }
            let expected = parts.reduce(into: [UInt8]()) { $0 += originFile("fmp4/\($1)") ?? [] }
            #expect(try mount.attributes("sources/tv/Clip [clip].mp4").size == UInt64(expected.count))
            #expect(try mount.contents("sources/tv/Clip [clip].mp4") == expected)
        }
    }

    @Test(arguments: MountSetup.available)
    func alternateAudioAndSubtitleRenditionsAreDownloadedWithTheVariant(_ setup: MountSetup) throws {
        let fixture = try LibraryFixture()
        let source = try fixture.addSource("tv")
        let item = try #require(try fixture.merge(source, [ItemSpec(contentID: "talk", title: "Talk", size: 0,
                                                                    hlsPlaylist: "alt/master.m3u8")])["talk"])
        try withLibraryMount(setup, fixture, options: ["refresh=100ms"]) { (mount: any LibraryMount) throws in
            // The item's file is a master playlist naming local track playlists.
            let text = String(decoding: try mount.contents("sources/tv/Talk [talk].m3u8"), as: UTF8.self)
            #expect(text.contains("#EXT-X-MEDIA:TYPE=AUDIO") && text.contains("URI=\".hls/\(item.id)/audio.m3u8\""), "\(text)")
            #expect(text.contains("#EXT-X-MEDIA:TYPE=SUBTITLES"), "\(text)")

            try mount.write(".control", "download sources/tv/Talk [talk].m3u8\n")
            #expect(eventually(within: 20) { (try? fixture.current(item).state) == .cached })
            let folder = "sources/tv/.hls/\(item.id)"
            let listed = Set(try mount.names(folder))
            #expect(listed.isSuperset(of: ["video.m3u8", "audio.m3u8", "subtitles-1.m3u8", "audio-0.ts", "subtitles-1-0.vtt"]),
                    "\(listed.sorted())")
            // Offline, the cached tracks still read; no one-file view (it would have no sound).
            fixture.origin.goOffline()
            #expect(try mount.contents(folder + "/audio-0.ts") == originFile("alt/audio/segment-00.ts"))
            #expect(try mount.contents(folder + "/subtitles-1-0.vtt") == originFile("alt/video/index0.vtt"))
            #expect(try !mount.names("sources/tv").contains("Talk [talk].ts"))
        }
    }

    @Test(arguments: MountSetup.available)
    func anEncryptedStreamsKeyReadsWhileItsLicenceHoldsAndIsRefusedAfter(_ setup: MountSetup) throws {
        let fixture = try LibraryFixture()
        let source = try fixture.addSource("tv")
        let rental = LicenceTerms(kind: .rental, rentalDuration: 3600)
        let item = try #require(try fixture.merge(source, [ItemSpec(contentID: "film", title: "Film", size: 0,
                                                                    licence: rental, hlsPlaylist: "aes/index.m3u8")])["film"])
        try withLibraryMount(setup, fixture, options: ["refresh=100ms"]) { (mount: any LibraryMount) throws in
            let keyPath = "sources/tv/.hls/\(item.id)/key"
            try mount.write(".control", "download sources/tv/Film [film].m3u8\n")
            #expect(eventually(within: 20) { (try? fixture.current(item).state) == .cached })
            // Segments stay encrypted in the cache; the key lives with the licence.
            #expect(try mount.contents(keyPath) == originFile("aes/key.bin"))
            #expect(try fixture.store.licence(itemID: item.id)?.key.map { [UInt8]($0) } == originFile("aes/key.bin"))
            #expect(try mount.contents("sources/tv/.hls/\(item.id)/0.ts") == originFile("aes/segment-00.ts"))
            // No one-file view of an encrypted stream (it would be clear bytes outside the licence).
            #expect(try !mount.names("sources/tv").contains("Film [film].ts"))

            // The licence runs out (as the engine's clock would record it).
            var licence = try #require(try fixture.store.licence(itemID: item.id))
            licence.expiresAt = Date().addingTimeInterval(-1)
            try fixture.store.putLicence(licence)
            // The mount sees it with its next tree refresh (100 ms here).
            #expect(eventually {
                do throws(Errno) {
                    try mount.open(keyPath).close()
                    return false
                } catch {
                    return error == .keyExpired
                }
            })
        }
    }
}
}
