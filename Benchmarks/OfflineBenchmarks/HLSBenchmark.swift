import Foundation
import OfflineEngine
import OfflineStore
import OfflineTestSupport

/// Downloads a generated `segments`-segment HLS stream (`segmentKiB` KiB per segment) from an
/// in-process origin through the engine, then fetches the same segment URLs with curl —
/// sequentially (one process, keep-alive) and with the engine's parallelism (`curl -Z`) — and
/// prints segments per second and MB/s of each, with the engine's ratio to both.
/// The origin runs in this process for all three, so each pays the same serving cost.
struct HLSBenchmark {
    struct Failure: Error, CustomStringConvertible { var description: String }

    var segments = 600
    var segmentKiB = 256

    init(arguments: [String]) throws {
        if let first = arguments.first {
            guard let value = Int(first), value > 0 else { throw Failure(description: "segments must be a positive number") }
            segments = value
        }
        if arguments.count > 1 {
            guard let value = Int(arguments[1]), value > 0 else { throw Failure(description: "segment-kib must be a positive number") }
            segmentKiB = value
        }
    }

    func run() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let size = Int64(segmentKiB) << 10
        var playlist = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-PLAYLIST-TYPE:VOD\n"
        for index in 0..<segments {
            origin.serve("/hls/\(index).ts", .generated(size: size, seed: UInt64(index + 1), contentType: "video/mp2t"))
            playlist += "#EXTINF:2.000,\n\(index).ts\n"
        }
        playlist += "#EXT-X-ENDLIST\n"
        origin.serve("/hls/index.m3u8", .text(playlist, contentType: "application/vnd.apple.mpegurl"))
        let urls = (0..<segments).map { origin.url("/hls/\($0).ts") }
        let bytes = Double(size) * Double(segments)
        let parallel = Downloader.hlsSegmentsInFlight

        let engine = try engineRun(origin: origin)
        let sequential = try curlRun(urls, arguments: [])
        let parallelCurl = try curlRun(urls, arguments: ["-Z", "--parallel-max", String(parallel)])

        print("hls \(segments) segments × \(segmentKiB) KiB (\(String(format: "%.1f", bytes / 1e6)) MB), in-process origin")
        print("                            wall s  segments/s      MB/s  engine speed ÷ this")
        for (name, seconds) in [("engine (\(parallel) in flight)", engine), ("curl sequential", sequential),
                                ("curl -Z --parallel-max \(parallel)", parallelCurl)] {
            let padded = name.padding(toLength: 26, withPad: " ", startingAt: 0)
            print(padded + String(format: " %7.2f %11.1f %9.1f %20.2f", seconds, Double(segments) / seconds,
                                  bytes / seconds / 1e6, seconds / engine))
        }
    }

    /// Seconds for the engine to download the stream into a fresh library (verified sizes).
    private func engineRun(origin: TestOrigin) throws -> Double {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("offlinefs-bench-hls-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try LibraryStore.open(folder: folder)
        let source = try store.addSource(name: "bench", feedURL: origin.url("/feed.json"))
        let entry = CatalogEntry(contentID: "stream", title: "stream", type: .hls, mediaURL: origin.url("/hls/index.m3u8"))
        _ = try store.mergeCatalog(sourceID: source.id, title: nil, entries: [entry], isComplete: true, now: Date())
        guard let item = try store.item(source: "bench", contentID: "stream") else { throw Failure(description: "no item") }
        let engine = try TransferEngine(store: store)
        let cpuBefore = TransferBenchmark.cpuSeconds()
        let started = Date()
        let result = engine.downloader.download(itemID: item.id)
        let seconds = Date().timeIntervalSince(started)
        let cpu = TransferBenchmark.cpuSeconds() - cpuBefore
        engine.shutdown()
        let stored = try store.item(id: item.id)
        try store.close()
        guard result.state == .cached else { throw Failure(description: "engine: \(result)") }
        print(String(format: "engine: %@, size %lld, CPU %.2f s (origin included)", result.message, stored?.size ?? -1, cpu))
        return seconds
    }

    /// Seconds for one curl process to fetch every URL to /dev/null (keep-alive between them).
    private func curlRun(_ urls: [String], arguments: [String]) throws -> Double {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = ["-s", "--no-progress-meter", "-f"] + arguments + urls.flatMap { ["-o", "/dev/null", $0] }
        let started = Date()
        try process.run()
        process.waitUntilExit()
        let seconds = Date().timeIntervalSince(started)
        guard process.terminationStatus == 0 else {
            throw Failure(description: "curl \(arguments.joined(separator: " ")) exited \(process.terminationStatus)")
        }
        return seconds
    }
}
