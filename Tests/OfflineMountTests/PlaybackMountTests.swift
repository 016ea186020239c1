import Foundation
import OfflineFUSE
import OfflineStore
import OfflineTestSupport
import Testing

/// Play tracking through a real mount (docs/playback.md): mpv's reads leave a resume point
/// and a watched mark; backups and scanners leave nothing. Kernel-only: the readers are
/// programs, told apart by name.
extension RealMounts {
@Suite(.serialized,
       .enabled(if: FUSEAvailability.hasDevFuse, "no /dev/fuse"),
       .enabled(if: FUSEAvailability.hasFusermount, "no fusermount3 in PATH"),
       .enabled(if: PlaybackPrograms.installed, "needs ffmpeg, mpv and ffmpegthumbnailer"))
struct PlaybackMountTests {
    /// mpv as a script would run it: no config, no output, as fast as it can decode.
    static let mpv = ["mpv", "--no-config", "--vo=null", "--ao=null", "--ao-null-untimed", "--untimed", "--really-quiet"]
    /// The mount counts a player's reads as played no faster than real time; `mpv` above
    /// plays as fast as it decodes.
    static let untimed = ["playback-speed=1000000"]
    static let duration = 600.0

    /// A 10-minute faststart H.264 video at 400 kbit/s (19 MB), made once per test process:
    /// long enough that the kernel's read-ahead (1 MiB, 20 seconds of it) is a small part.
    static let video: Result<(path: String, size: Int64), Failure> = {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("offlinefs-playback-\(getpid())").path
        atexit { try? FileManager.default.removeItem(atPath: FileManager.default.temporaryDirectory
            .appendingPathComponent("offlinefs-playback-\(getpid())").path) }
        let path = folder + "/video.mp4"
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let made = try ChildProcess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=10",
                                             "-t", String(Int(duration)), "-c:v", "libx264", "-preset", "ultrafast", "-b:v", "400k",
                                             "-movflags", "+faststart", path], deadline: 120)
            guard made.status == 0 else { return .failure(Failure("ffmpeg: \(made.stderr)")) }
            let size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value ?? 0
            return .success((path, size))
        } catch {
            return .failure(Failure("making the test video: \(error)"))
        }
    }()

    /// A library of `count` copies of the video (`Video 1` …), nothing cached.
    static func videos(_ count: Int = 1, licence: LicenceTerms? = nil) throws -> (LibraryFixture, [Item]) {
        let fixture = try LibraryFixture()
        let video = try Self.video.get()
        let source = try fixture.addSource("acme")
        let items = try fixture.merge(source, (1...count).map {
            ItemSpec(contentID: "v\($0)", title: "Video \($0)", size: video.size, licence: licence, file: video.path,
                     duration: duration)
        })
        return (fixture, items.values.sorted { $0.id < $1.id })
    }

    /// The attribute's value, or nil when the item has none.
    static func xattr(_ name: String, _ path: String) -> String? {
        guard let read = try? ChildProcess.run(["getfattr", "--only-values", "-n", name, path]), read.status == 0 else { return nil }
        return read.stdout
    }

    @Test func aCachedItemPlayedThroughLeavesUnwatched() throws {
        let (fixture, items) = try Self.videos()
        let name = try #require(items[0].fileName)
        try withMount(fixture, options: Self.untimed) { (mount: MountedLibrary) throws in
            #expect(fixture.control("download sources/acme/\(name)\n") == nil)
            #expect(eventually(within: 30) { try fixture.current(items[0]).state == .cached })
            #expect(eventually { FileManager.default.fileExists(atPath: fixture.path("unwatched/\(name)")) })
            #expect(Self.xattr("user.offline.watched", fixture.path("unwatched/\(name)")) == "0")

            let played = try mount.run(Self.mpv + [fixture.path("unwatched/\(name)")], deadline: 60)
            #expect(played.status == 0, "\(played.stderr)")

            let media = fixture.path("sources/acme/\(name)")
            #expect(eventually { Self.xattr("user.offline.watched", media) == "1" })
            #expect(Self.xattr("user.offline.position", media) == "0")
            #expect(Self.xattr("user.offline.last-played", media) != nil)
            #expect(eventually { !FileManager.default.fileExists(atPath: fixture.path("unwatched/\(name)")) })
        }
    }

    /// `mount-helpers/offlinefs.lua`, the mpv script `make install` installs.
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("mount-helpers/offlinefs.lua").path

    /// With the script, mpv itself says where it stopped.
    @Test func anUncachedItemPlayedHalfwayWithTheScriptHasItsPositionInTheMiddle() throws {
        let (fixture, items) = try Self.videos()
        let name = try #require(items[0].fileName)
        try withMount(fixture) { (mount: MountedLibrary) throws in
            let media = fixture.path("sources/acme/\(name)")
            let played = try mount.run(Self.mpv + ["--script=\(Self.script)", "--end=300", media], deadline: 60)
            #expect(played.status == 0, "\(played.stderr)")
            #expect(eventually { Self.xattr("user.offline.position", media).flatMap(Double.init).map { (299...301).contains($0) } == true },
                    "position \(Self.xattr("user.offline.position", media) ?? "-")")
            #expect(Self.xattr("user.offline.watched", media) == "0")
            // Played on to the end: watched, and the resume point back to 0.
            let rest = try mount.run(Self.mpv + ["--script=\(Self.script)", "--start=300", media], deadline: 60)
            #expect(rest.status == 0, "\(rest.stderr)")
            #expect(eventually { Self.xattr("user.offline.watched", media) == "1" })
            #expect(Self.xattr("user.offline.position", media) == "0")
        }
    }

    /// Without it, the mount reads where a player that reads as it plays (mpv without its
    /// cache, as ffplay or VLC read) stopped from its reads.
    @Test func anUncachedItemPlayedHalfwayHasItsPositionNearTheMiddleFromTheReads() throws {
        let (fixture, items) = try Self.videos()
        let name = try #require(items[0].fileName)
        try withMount(fixture, options: Self.untimed) { (mount: MountedLibrary) throws in
            let media = fixture.path("sources/acme/\(name)")
            let played = try mount.run(Self.mpv + ["--cache=no", "--end=300", media], deadline: 60)
            #expect(played.status == 0, "\(played.stderr)")
            #expect(eventually { Self.xattr("user.offline.last-played", media) != nil })
            let position = try #require(Self.xattr("user.offline.position", media).flatMap(Double.init))
            // Where mpv stopped, plus what it and the kernel had read ahead.
            #expect((295...360).contains(position), "position \(position)")
            #expect(Self.xattr("user.offline.watched", media) == "0")
        }
    }

    /// mpv with its defaults, as a user starts it: its cache reads the whole 19 MB file in a
    /// moment. Two seconds of playing are not a film watched (they were: the reads reached
    /// the end, and `delete-watched-after` then evicted it).
    @Test func twoSecondsOfPlayingWithMpvsDefaultsAreNotAFilmWatched() throws {
        let (fixture, items) = try Self.videos()
        let name = try #require(items[0].fileName)
        try withMount(fixture) { (mount: MountedLibrary) throws in
            let media = fixture.path("sources/acme/\(name)")
            let played = try mount.run(["mpv", "--no-config", "--vo=null", "--ao=null", "--really-quiet", "--length=2", media],
                                       deadline: 60)
            #expect(played.status == 0, "\(played.stderr)")
            #expect(eventually { Self.xattr("user.offline.last-played", media) != nil })
            #expect(Self.xattr("user.offline.watched", media) == "0")
            let position = try #require(Self.xattr("user.offline.position", media).flatMap(Double.init))
            #expect(position < 60, "position \(position)")
        }
    }

    @Test func backupsScannersAndFrameGrabsChangeNoPlayStateAndStartNoPlayClock() throws {
        let rental = LicenceTerms(kind: .rental, rentalDuration: 86_400, playDuration: 600)
        let (fixture, items) = try Self.videos(2, licence: rental)
        let backup = fixture.directory + "/backup"
        try withMount(fixture) { (mount: MountedLibrary) throws in
            for name in items.compactMap(\.fileName) {
                #expect(fixture.control("acquire sources/acme/\(name)\n") == nil)
            }
            #expect(eventually { try items.allSatisfy { try fixture.store.licence(itemID: $0.id)?.acquiredAt != nil } })
            let commands: [[String]] = [
                ["rsync", "-a", fixture.path("sources") + "/", backup + "/"],
                ["sh", "-c", "tar c -C \"$0\" . | wc -c", fixture.path("sources")],
                ["sh", "-c", "file -b \"$0\"/*.mp4", fixture.path("sources/acme")],
            ] + items.compactMap(\.fileName).flatMap { name -> [[String]] in
                let path = fixture.path("sources/acme/\(name)")
                // ffmpeg's frame grabs and a conversion reading all of it (a media server's
                // chapter images and trickplay) are no playback either
                return [["ffmpegthumbnailer", "-i", path, "-o", fixture.directory + "/thumb.png", "-s", "128"],
                        ["ffmpeg", "-v", "error", "-y", "-ss", "300", "-i", path, "-frames:v", "1", fixture.directory + "/frame.png"],
                        ["ffmpeg", "-v", "error", "-i", path, "-c", "copy", "-f", "null", "-"]]
            }
            for command in commands {
                let run = try mount.run(command, deadline: 60)
                #expect(run.status == 0, "\(command[0]): \(run.stderr)")
            }
        }
        for item in items {
            let now = try fixture.current(item)
            #expect(now.lastPlayedAt == nil && now.position == nil && !now.watched, "\(item.contentID)")
            #expect(try fixture.store.licence(itemID: item.id)?.firstPlayedAt == nil, "\(item.contentID)")
        }
    }
}

/// Play marks written by hand (`setfattr`), in both setups: they persist across a remount, and
/// a bad value is refused.
@Suite(.serialized)
struct PlayMarkTests {
    @Test(arguments: MountSetup.available)
    func marksWrittenByHandSurviveARemount(_ setup: MountSetup) throws {
        let fixture = try LibraryFixture()
        let source = try fixture.addSource("acme")
        let item = try #require(try fixture.merge(source, [ItemSpec(contentID: "v1", title: "Video 1", size: 100_000,
                                                                    duration: PlaybackMountTests.duration)])["v1"])
        let media = "sources/acme/\(try #require(item.fileName))"
        try withLibraryMount(setup, fixture) { (mount: any LibraryMount) throws in
            try mount.setXattr(media, "user.offline.position", "42")
            #expect(try mount.xattr(media, "user.offline.position") == "42")
            #expect(throws: Errno.invalidArgument) { try mount.setXattr(media, "user.offline.position", "soon") }
            try mount.setXattr(media, "user.offline.watched", "1")
            try mount.setXattr(media, "user.offline.watched", "0")
            try mount.setXattr(media, "user.offline.position", "42")
        }
        try withLibraryMount(setup, fixture) { (mount: any LibraryMount) throws in
            #expect(try mount.xattr(media, "user.offline.position") == "42")
            #expect(try mount.xattr(media, "user.offline.watched") == "0")
        }
    }
}
}

enum PlaybackPrograms {
    static let installed = ["ffmpeg", "mpv", "ffmpegthumbnailer"].allSatisfy { program in
        (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
            .contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(program)") }
    }
}
