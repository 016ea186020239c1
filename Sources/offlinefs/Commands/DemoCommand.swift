import ArgumentParser
import Foundation
import OfflineEngine
import OfflineMount
import OfflineStore
import OfflineTestSupport

struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Try offlinefs on a bundled sample library served from this machine.",
        discussion: """
            Starts a local origin (127.0.0.1) serving a sample JSON catalog (four short videos \
            with thumbnails and subtitles, nested categories, a 10-minute rental, an HLS stream) \
            and a podcast feed (two MP3 episodes), adds them to a throw-away library (or \
            --library DIR), syncs them and mounts the library in the foreground until Ctrl-C.
            Example: offlinefs demo /tmp/offlinefs-demo
            """)

    @Argument(help: "Where the demo library will be mounted.") var mountpoint: String
    @Option(help: ArgumentHelp("Keep the demo library in this folder (default: a throw-away folder).", valueName: "dir"))
    var library: String?

    func run() throws {
        let media = try DemoMedia.locate()
        let origin = try TestOrigin()
        defer { origin.stop() }
        let folder = library.map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("offlinefs-demo-\(getpid())")
        defer { if library == nil { try? FileManager.default.removeItem(at: folder) } }
        let demo = try Library(folder: folder)

        for (name, url) in try DemoCatalog.serve(media, on: origin) {
            // The origin's port changes every run: point an existing demo source at it again.
            if try demo.store.source(named: name) != nil {
                try demo.store.setFeedURL(name: name, url)
            } else {
                try demo.addSource(name: name, feedURL: url)
            }
        }
        for report in try demo.sync() { print(report.summary) }
        try FileManager.default.createDirectory(atPath: mountpoint, withIntermediateDirectories: true)
        print("""

            The demo library is mounted at \(mountpoint) until you press Ctrl-C. In another terminal:
              ls -l \(mountpoint)/sources/*
              ls -R \(mountpoint)/categories
              cmp "\(mountpoint)/sources/acme/Launch Day [ep-001].mp4" \(media.url(of: "acme/launch-day.mp4").path)
              mpv "\(mountpoint)/sources/night-owls/Bats [owl-2].mp3"
              mpv "\(mountpoint)/sources/acme/Weather Radar [radar-1].m3u8"
              echo "download sources/acme/Weather Radar [radar-1].m3u8" > \(mountpoint)/.control
            """)
        fflush(nil)  // the tour must show before the mount starts logging
        let options = try MountOptions.parse([])
        try MountRunner(library: { demo }, mountpoint: mountpoint, options: options, foreground: true).run()
    }
}
