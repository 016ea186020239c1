import OfflineTestSupport
import OfflineFUSE
import Foundation
import OfflineEngine
import OfflineStore
import Testing

/// The README's shell session, run verbatim against a temporary library.
extension RealMounts {
@Suite(.serialized, .enabled(if: FUSEAvailability.hasDevFuse, "no /dev/fuse"),
       .enabled(if: FUSEAvailability.hasFusermount, "no fusermount3 in PATH"))
struct ReadmeTourTests {
    @Test func theReadmeSessionRuns() throws {
        let readme = try String(contentsOfFile: MountHelperTests.repository + "/README.md", encoding: .utf8)
        let start = try #require(readme.range(of: "<!-- tour -->\n```sh\n"))
        let end = try #require(readme.range(of: "```\n<!-- /tour -->"))
        let script = String(readme[start.upperBound..<end.lowerBound])

        let library = try StandardLibrary()
        let fixture = library.fixture
        let origin = fixture.directory + "/origin.mp4"
        try fixture.originBytes(library.items["ep-004"]!).write(to: URL(fileURLWithPath: origin))
        try fixture.library.store.close()
        let bin = URL(fileURLWithPath: MountedLibrary.executable).deletingLastPathComponent().path
        defer {
            if MountTable.isMounted(fixture.mountpoint) { _ = try? ChildProcess.run(["umount", "-l", fixture.mountpoint]) }
        }
        let path = bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let run = try ChildProcess.run(["env", "PATH=\(path)", "LIB=\(fixture.libraryPath)", "MNT=\(fixture.mountpoint)",
                                        "ORIGIN=\(origin)", "bash", "-e", "-c", script], deadline: 60)
        #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")
        #expect(run.stdout.contains(StandardLibrary.remote))
        #expect(run.stdout.contains("same bytes as the origin"))
        #expect(run.stdout.contains("user.offline.state=\"cached\""))
        #expect(run.stdout.contains("discovered"))
        #expect(run.stdout.contains("unknown command 'bad'"), "\(run.stdout)")
        #expect(run.stderr.contains("Invalid argument"))
        #expect(!MountTable.isMounted(fixture.mountpoint))
    }
}
}
