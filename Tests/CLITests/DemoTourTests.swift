import Foundation
import OfflineFUSE
import OfflineTestSupport
import Testing

/// The README's first command, as a newcomer uses it: `offlinefs demo` mounts the sample
/// library; `ls`, `cat`, `getfattr` and the control file work on it; Ctrl-C unmounts.
@Suite(.serialized, .enabled(if: FileManager.default.fileExists(atPath: "/dev/fuse"), "no /dev/fuse"))
struct DemoTourTests {
    static let media = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/offlinefs/Demo/Media")

    @Test func theDemoMountsAndTheTourWorks() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("offlinefs-demo-tour-\(UUID().uuidString)")
        let mount = folder.appendingPathComponent("mnt").path
        let library = folder.appendingPathComponent("library").path
        try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
        defer {
            if MountTable.isMounted(mount) { _ = try? ChildProcess.run(["fusermount3", "-uz", mount]) }
            try? FileManager.default.removeItem(at: folder)
        }

        // Given: the demo, started as the README says (with a named library to look into)
        let demo = try ChildProcess.start([CLIRunner.executable.path, "demo", mount, "--library", library])
        defer { if demo.wait(deadline: 0) == false { demo.kill(SIGKILL) } }
        let mounted = MountTable.wait(for: mount, mounted: true, deadline: 60)
        try #require(mounted, "demo did not mount: \(demo.currentOutput)")

        // When: the tour — ls, cat, getfattr, the control file
        let launch = mount + "/sources/acme/Launch Day [ep-001].mp4"
        let listing = try ChildProcess.run(["ls", "-l", mount + "/sources/acme", mount + "/sources/night-owls"])
        #expect(listing.stdout.contains("Launch Day [ep-001].mp4"), "\(listing.stdout)")
        #expect(listing.stdout.contains("Owls at Dusk [owl-1].mp3"))
        let categories = try ChildProcess.run(["ls", mount + "/categories/News"])
        #expect(categories.stdout.contains("Local"), "\(categories.stdout)")

        // Then: the bytes are the sample's own, streamed from the local origin
        let read = FileManager.default.contents(atPath: launch)
        let original = FileManager.default.contents(atPath: Self.media.appendingPathComponent("acme/launch-day.mp4").path)
        #expect(read != nil && read == original, "cat of the demo video matches the bundled file")

        // And: a streamed item becomes cached; the control file downloads another
        #expect(eventually { try attribute("user.offline.state", of: launch) == "cached" })
        let control = try ChildProcess.run(["sh", "-c", "echo 'download night-owls/owl-1' > '\(mount)/.control'"])
        #expect(control.status == 0, "\(control.stderr)")
        let owl = mount + "/sources/night-owls/Owls at Dusk [owl-1].mp3"
        #expect(eventually { try attribute("user.offline.state", of: owl) == "cached" })
        // bash, whose echo names the errno (dash's says "I/O error" for any failed write)
        let bad = try ChildProcess.run(["bash", "-c", "echo 'frobnicate everything' > '\(mount)/.control'"])
        #expect(bad.status != 0 && bad.stderr.contains("Invalid argument"), "\(bad.stderr)")

        // And: the HLS stream plays from its playlist as the README says, and once downloaded
        // it is one .ts file too
        do {
            try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/ffmpeg"),
                         "ffmpeg is missing (.ci/install-deps installs it)")
            let radar = mount + "/sources/acme/Weather Radar [radar-1]"
            let played = try ChildProcess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", radar + ".m3u8", "-f", "null", "-"],
                                              deadline: 60)
            #expect(played.status == 0 && played.stderr.isEmpty, "ffmpeg: \(played.stderr)")
            let queued = try ChildProcess.run(["sh", "-c", "echo 'download sources/acme/Weather Radar [radar-1].m3u8 quality=low' > '\(mount)/.control'"])
            #expect(queued.status == 0, "\(queued.stderr)")
            #expect(eventually { try attribute("user.offline.state", of: radar + ".m3u8") == "cached" })
            #expect(try attribute("user.offline.segments", of: radar + ".m3u8") == "5/5")
            #expect(eventually { FileManager.default.fileExists(atPath: radar + ".ts") })
            let joined = try ChildProcess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", radar + ".ts", "-f", "null", "-"],
                                              deadline: 60)
            #expect(joined.status == 0, "ffmpeg: \(joined.stderr)")
        }

        // And: Ctrl-C (SIGINT) unmounts cleanly
        demo.kill(SIGINT)
        #expect(demo.wait(deadline: 20))
        #expect(demo.result().status == 0, "\(demo.result().stderr)")
        #expect(!MountTable.isMounted(mount))
    }

    private func attribute(_ name: String, of path: String) throws -> String {
        try ChildProcess.run(["getfattr", "-n", name, "--only-values", path]).stdout
    }

    /// Polls `condition` for up to 20 s (downloads from the local origin take milliseconds).
    private func eventually(_ condition: () throws -> Bool) -> Bool {
        let end = Date().addingTimeInterval(20)
        while Date() < end {
            if (try? condition()) == true { return true }
            usleep(50_000)
        }
        return false
    }
}
