import Foundation
import OfflineEngine
import OfflineTestSupport

/// Syncs a generated RSS feed of `items` items from an in-process origin into a fresh
/// library and prints the wall time, the CPU time and the process's peak memory.
/// Target (issue 2): 100,000 items in under 10 s and under 300 MB on 2 cores.
struct SyncBenchmark {
    let items: Int

    func run() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("offlinefs-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // The feed is served from a file so that only the sync's own memory is measured.
        let feedFile = folder.appendingPathComponent("feed.rss")
        let feedBytes = try Self.writeRSS(items: items, origin: origin, to: feedFile)
        origin.serve("/feed.rss", .file(feedFile.path, contentType: "application/rss+xml"))
        let library = try Library(folder: folder)
        try library.addSource(name: "bench", feedURL: origin.url("/feed.rss"))

        let memoryBefore = Resources.peakResidentMiB()
        let cpuBefore = Resources.cpuSeconds()
        let start = ContinuousClock.now
        let report = try library.sync()[0]
        let wall = ContinuousClock.now - start
        let cpu = Resources.cpuSeconds() - cpuBefore
        let peakMemory = Resources.peakResidentMiB()  // before the check below lists 100k items

        guard report.succeeded else { throw BenchmarkFailure(report.summary) }
        let listed = try library.items().count
        guard listed == items else { throw BenchmarkFailure("listed \(listed) of \(items) items") }

        print("sync-rss items \(items)")
        print("sync-rss feed_bytes \(feedBytes)")
        print(String(format: "sync-rss wall_s %.2f", wall.seconds))
        print(String(format: "sync-rss cpu_s %.2f", cpu))
        print(String(format: "sync-rss peak_rss_mib %.0f (before sync: %.0f)", peakMemory, memoryBefore))
        print("sync-rss target wall_s < 10, peak_rss_mib < 300")

        // A re-sync of the unchanged feed: one conditional request.
        let resyncStart = ContinuousClock.now
        _ = try library.sync()
        print(String(format: "sync-rss resync_unchanged_s %.3f", (ContinuousClock.now - resyncStart).seconds))
    }

    /// Writes a podcast-shaped RSS document with `items` episodes, all with enclosure
    /// lengths; returns its size.
    static func writeRSS(items: Int, origin: TestOrigin, to file: URL) throws -> Int {
        FileManager.default.createFile(atPath: file.path, contents: nil)
        let handle = try FileHandle(forWritingTo: file)
        defer { try? handle.close() }
        var written = 0
        func flush(_ text: inout String) throws {
            let data = Data(text.utf8)
            try handle.write(contentsOf: data)
            written += data.count
            text = ""
        }
        var text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">
            <channel><title>Benchmark Feed</title><link>\(origin.baseURL)</link>
            <description>Generated for the sync benchmark.</description>

            """
        for index in 0..<items {
            if index % 1000 == 0 { try flush(&text) }
            text += """
                <item><title>Episode \(index): a reasonably long title like real feeds have</title>
                <guid isPermaLink="false">episode-\(index)</guid>
                <pubDate>Wed, 01 May 2024 12:30:00 +0000</pubDate>
                <description>Notes for episode \(index), with &lt;b&gt;markup&lt;/b&gt; as feeds carry.</description>
                <enclosure url="\(origin.baseURL)/media/episode-\(index).mp3" length="\(1_000_000 + index)" type="audio/mpeg"/>
                <category>Topic \(index % 20)</category><itunes:duration>00:42:17</itunes:duration></item>

                """
        }
        text += "</channel></rss>\n"
        try flush(&text)
        return written
    }
}

struct BenchmarkFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

enum Resources {
    /// VmHWM of this process, in MiB.
    static func peakResidentMiB() -> Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kib = Double(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
        return kib / 1024
    }

    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
