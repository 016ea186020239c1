import Foundation
import OfflineStore
import OfflineTestSupport
import Testing

/// The mount shared with Samba, as people share a media library on their network: a client
/// gets every file whole, the media streamed from the origin through the share.
extension RealMounts {
@Suite(.serialized,
       .enabled(if: FUSEAvailability.hasDevFuse, "no /dev/fuse"),
       .enabled(if: FUSEAvailability.hasFusermount, "no fusermount3 in PATH"),
       .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/sbin/smbd"), "no smbd (package samba)"),
       .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/smbclient"), "no smbclient"))
struct SambaShareTests {
    static let port = 44_555

    @Test func smbclientGetsAnUncachedItemItsThumbnailAndItsSubtitlesWhole() throws {
        // Given a library just synced (side files' sizes known, nothing cached), mounted for
        // every user, and shared read-only for guests by a Samba server on 127.0.0.1
        let fixture = try LibraryFixture()
        let source = try fixture.addSource("acme")
        let item = try #require(try fixture.merge(source, [
            ItemSpec(contentID: "v", title: "Video", size: 700_000, seed: 4, thumbnail: true, subtitles: ["en"], sideFileSizes: true),
        ])["v"])
        try withMount(fixture, options: ["allow_other"]) { (mount: MountedLibrary) throws in
            let samba = fixture.directory + "/samba"
            for folder in ["private", "lock", "state", "cache", "pid", "ncalrpc"] {
                try FileManager.default.createDirectory(atPath: samba + "/" + folder, withIntermediateDirectories: true)
            }
            let config = samba + "/smb.conf"
            try """
                [global]
                  server role = standalone server
                  map to guest = Bad User
                  interfaces = lo
                  bind interfaces only = yes
                  smb ports = \(Self.port)
                  private dir = \(samba)/private
                  lock directory = \(samba)/lock
                  state directory = \(samba)/state
                  cache directory = \(samba)/cache
                  pid directory = \(samba)/pid
                  ncalrpc dir = \(samba)/ncalrpc
                  log file = \(samba)/log.%m
                  load printers = no
                  disable spoolss = yes
                [media]
                  path = \(fixture.mountpoint)
                  guest ok = yes
                  read only = yes
                """.write(toFile: config, atomically: true, encoding: .utf8)
            let smbd = try ChildProcess.start(["/usr/sbin/smbd", "--foreground", "-s", config])
            defer { smbd.kill(SIGTERM); _ = smbd.wait(deadline: 5) }
            func smbclient(_ commands: String) throws -> ChildProcess.Result {
                try ChildProcess.run(["smbclient", "//127.0.0.1/media", "-p", "\(Self.port)", "-N", "-s", config, "-c", commands],
                                     deadline: 30)
            }
            #expect(eventually { (try? smbclient("ls"))?.status == 0 }, "smbd did not serve the share")

            // When a client gets the item, its thumbnail and its subtitles
            let got = samba + "/got"
            let get = try smbclient("""
                cd sources/acme; get "Video [v].mp4" \(got)-media; get "Video [v]-thumb.jpg" \(got)-thumb; get "Video [v].en.vtt" \(got)-vtt
                """)
            #expect(get.status == 0, "\(get.stdout)\(get.stderr)")
            // Then each is the origin's file
            #expect(FileManager.default.contents(atPath: got + "-media") == fixture.originBytes(item))
            #expect(FileManager.default.contents(atPath: got + "-thumb") == (try fixture.sideFileBytes(item, "thumbnail")))
            #expect(FileManager.default.contents(atPath: got + "-vtt") == (try fixture.sideFileBytes(item, "subtitle.en")))
        }
    }
}
}
