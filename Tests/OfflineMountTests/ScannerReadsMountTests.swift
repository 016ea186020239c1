import Foundation
import OfflineStore
import OfflineTestSupport
import Testing

/// Policy `scanner-reads` through a real mount: a thumbnailer gets the uncached bytes the
/// policy allows and an error at once for the rest; players and `cat` are never limited.
extension RealMounts {
@Suite(.serialized,
       .enabled(if: FUSEAvailability.hasDevFuse, "no /dev/fuse"),
       .enabled(if: FUSEAvailability.hasFusermount, "no fusermount3 in PATH"),
       .enabled(if: PlaybackPrograms.installed, "needs ffmpeg, mpv and ffmpegthumbnailer"))
struct ScannerReadsMountTests {
    static func thumbnail(_ mount: MountedLibrary, _ fixture: LibraryFixture, _ name: String) throws -> (ChildProcess.Result, Double) {
        let start = Date()
        let run = try mount.run(["ffmpegthumbnailer", "-i", fixture.path("sources/acme/\(name)"),
                                 "-o", fixture.directory + "/thumb.png", "-s", "128"], deadline: 60)
        return (run, Date().timeIntervalSince(start))
    }

    @Test func underHeaderAThumbnailerGetsItsFrameAndKeepsAFewMiB() throws {
        let (fixture, items) = try PlaybackMountTests.videos()
        let name = try #require(items[0].fileName)
        try withMount(fixture) { (mount: MountedLibrary) throws in
            // The default policy: the frame it seeks to (10 % in) is within its allowance
            let (run, _) = try Self.thumbnail(mount, fixture, name)
            #expect(run.status == 0, "\(run.stderr)")
            #expect(!run.stderr.contains("Seeking in video failed"), "\(run.stderr)")
        }
        // The first and last MiB, and at most 4 MiB elsewhere
        let kept = try fixture.current(items[0]).bytesPresent
        #expect(kept > 0 && kept <= 6 << 20, "\(kept) bytes kept")
    }

    @Test func underCachedOnlyAThumbnailerFailsAtOnceAndPlayersAndCatAreNotLimited() throws {
        let (fixture, items) = try PlaybackMountTests.videos()
        let name = try #require(items[0].fileName)
        let media = fixture.path("sources/acme/\(name)")
        try withMount(fixture) { (mount: MountedLibrary) throws in
            #expect(fixture.control("set scanner-reads cached-only\n") == nil)
            let (run, seconds) = try Self.thumbnail(mount, fixture, name)
            #expect(run.status != 0, "\(run.stdout)")
            #expect(seconds < 1, "\(seconds) s")
            #expect(try fixture.current(items[0]).bytesPresent == 0)
            // mpv plays the first 10 seconds; cat reads it whole
            let played = try mount.run(PlaybackMountTests.mpv + ["--end=10", media], deadline: 60)
            #expect(played.status == 0, "\(played.stderr)")
            let cat = try mount.run(["sh", "-c", "cat \"$0\" | wc -c", media], deadline: 60)
            #expect(cat.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == String(items[0].size ?? -1))
        }
    }
}
}
