import Foundation
import OfflineTestSupport

/// Memory over many files: through a mount of a library of `items` uncached items, opens
/// each item file once, reads its first 4 KiB and closes it, then prints the mount process's
/// resident memory, descriptors and threads before and after (each once the mount is idle).
/// State of files nobody reads any more must go, so the growth stays small however many
/// items were touched. The cache is capped (`cache-limit`) so eviction runs too. With
/// `--rounds N` every item is read N times over, with the anonymous memory printed after each
/// round: growth in the first round is per item touched, growth after it per read.
struct OpenReadBenchmark {
    private let origin: TestOrigin
    var items = 100_000
    var rounds = 1
    var program: String?

    init(arguments: [String]) throws {
        origin = try TestOrigin()
        try forEachFlag(in: arguments) { flag, value in
            switch flag {
            case "--items": items = try positiveCount(flag, value)
            case "--rounds": rounds = try positiveCount(flag, value)
            case "--offlinefs": program = value
            default: return false
            }
            return true
        }
    }

    func run() throws {
        let program = try OfflineFSProgram.locate(program)
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("offlinefs-open-read-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: base) }
        defer { origin.stop() }
        let bench = try MountedBenchLibrary(items: items, program: program, base: base, origin: origin)
        let (mount, mountpoint) = (bench.mount, bench.mountpoint)
        defer { try? mount.stop() }
        try mount.waitUntilIdle()
        let stats = ProcessStats(pid: mount.pid)
        let before = (rss: stats.residentMiB, fds: stats.openDescriptors, threads: stats.threads,
                      anon: stats.statusKiB("RssAnon") / 1024, file: stats.statusKiB("RssFile") / 1024)
        print("items \(items) count")
        print(String(format: "rss_before_mib %.1f MiB", before.rss))

        var buffer = [UInt8](repeating: 0, count: 4096)
        var seconds = 0.0
        for round in 1...rounds {
            let start = Date()
            for index in 0..<items {
                let path = mountpoint + "/sources/bench/" + BenchCatalog.fileName(index)
                let fd = open(path, O_RDONLY)
                guard fd >= 0 else { throw BenchmarkFailure("open \(path): errno \(errno)") }
                defer { close(fd) }
                guard pread(fd, &buffer, buffer.count, 0) == buffer.count else {
                    throw BenchmarkFailure("read \(path): errno \(errno)")
                }
            }
            seconds += Date().timeIntervalSince(start)
            if rounds > 1 {
                try mount.waitUntilIdle()
                print(String(format: "round_%d_rss_anon_mib %.1f MiB", round, stats.statusKiB("RssAnon") / 1024))
            }
        }
        try mount.waitUntilIdle()
        let after = (rss: stats.residentMiB, fds: stats.openDescriptors, threads: stats.threads,
                     anon: stats.statusKiB("RssAnon") / 1024, file: stats.statusKiB("RssFile") / 1024)
        print(String(format: "open_read_per_s %.0f /s", Double(items * rounds) / seconds))
        print(String(format: "rss_after_mib %.1f MiB", after.rss))
        print(String(format: "rss_growth_mib %.1f MiB", after.rss - before.rss))
        // Anonymous (heap, stacks, staging) apart from file-backed (code the reads paged in).
        print(String(format: "rss_anon_growth_mib %.1f MiB", after.anon - before.anon))
        print(String(format: "rss_file_growth_mib %.1f MiB", after.file - before.file))
        print(String(format: "peak_rss_mib %.1f MiB", stats.peakResidentMiB))
        print("fds_before_after \(before.fds) \(after.fds) count")
        print("threads_before_after \(before.threads) \(after.threads) count")
    }
}
