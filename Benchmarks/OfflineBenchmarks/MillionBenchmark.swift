import Foundation
import OfflineTestSupport

/// A library of a million items, as users meet it: `offlinefs sync` of a generated paged
/// JSON catalog (`BenchCatalog`) from an in-process origin, `offlinefs mount -f`, listings
/// with `ls` and `find`, then `offlinefs sync` of the unchanged catalog and of the catalog
/// with its first page changed. Each step runs the
/// `offlinefs` program beside this one, so each figure is the process a user would run.
/// Prints one `metric value unit` line per figure.
struct MillionBenchmark {
    private let origin: TestOrigin
    var items = 1_000_000
    var program: String?
    /// Where the library, catalog and mount point go; kept after the run when given.
    var folder: String?

    init(arguments: [String]) throws {
        origin = try TestOrigin()
        try forEachFlag(in: arguments) { flag, value in
            switch flag {
            case "--items": items = try positiveCount(flag, value)
            case "--offlinefs": program = value
            case "--folder": folder = value
            default: return false
            }
            return true
        }
    }

    func run() throws {
        let program = try OfflineFSProgram.locate(program)
        let base = URL(fileURLWithPath: folder ?? FileManager.default.temporaryDirectory
            .appendingPathComponent("offlinefs-million-\(UUID().uuidString)").path)
        if FileManager.default.fileExists(atPath: base.path) {
            throw BenchmarkFailure("\(base.path) exists; give a new folder")
        }
        defer { if folder == nil { try? FileManager.default.removeItem(at: base) } }
        let library = base.appendingPathComponent("library").path
        let mountpoint = base.appendingPathComponent("mnt").path

        defer { origin.stop() }
        let catalog = try BenchCatalog(items: items, folder: base.appendingPathComponent("catalog"), origin: origin)
        print("items \(items) count")
        print("catalog_mib \(format(Double(catalog.bytes) / 1_048_576)) MiB")

        try run([program, "source", "add", "--library", library, "bench", catalog.feedURL])
        origin.clearLog()
        try sync(program: program, library: library)
        print("store_mib \(format(Double(Self.allocatedBytes(library)) / 1_048_576)) MiB")

        var start = ContinuousClock.now
        let mount = try ChildMount(program: program, library: library, mountpoint: mountpoint)
        var mounted = true
        defer { if mounted { try? mount.stop() } }
        try mount.waitForStat(mountpoint + "/sources/bench/" + BenchCatalog.fileName(items - 1))
        print("mount_ms \(format((ContinuousClock.now - start).seconds * 1000)) ms")
        // A listing waits for the first tree (a stat may be answered before it): the idle
        // figures below are those of a mount that has built it.
        _ = try FileManager.default.contentsOfDirectory(atPath: mountpoint + "/categories")
        print("first_listing_ms \(format((ContinuousClock.now - start).seconds * 1000)) ms")
        try mount.waitUntilIdle()
        print("idle_rss_mib \(format(ProcessStats(pid: mount.pid).residentMiB)) MiB")
        print("idle_cpu_pct \(format(mount.cpuShare(over: 10) * 100)) %")

        let big = mountpoint + "/categories/" + BenchCatalog.bigCategory
        start = ContinuousClock.now
        let listed = try count(["sh", "-c", #"LC_ALL=C ls -l --color=never "$1" | wc -l"#, "sh", big])
        print("ls_100k_s \(format((ContinuousClock.now - start).seconds)) s")
        guard listed == BenchCatalog.bigCategoryItems(items) + 1 else {  // and ls's "total" line
            throw BenchmarkFailure("ls -l listed \(listed - 1) of \(BenchCatalog.bigCategoryItems(items)) items")
        }
        start = ContinuousClock.now
        let found = try count(["sh", "-c", #"find "$1" | wc -l"#, "sh", mountpoint])
        print("find_s \(format((ContinuousClock.now - start).seconds)) s")
        print("find_entries \(found) count")
        try mount.waitUntilIdle()
        print("idle_after_find_rss_mib \(format(ProcessStats(pid: mount.pid).residentMiB)) MiB")
        print("mount_peak_rss_mib \(format(ProcessStats(pid: mount.pid).peakResidentMiB)) MiB")
        try mount.stop()
        mounted = false

        try resync(program: program, library: library, metric: "resync")
        print("resync_requests \(origin.requests.count) count")
        // One page of the catalog changes (an item retitled): the other pages are asked for
        // conditionally and answer 304 (docs/catalog-format.md, "Paging").
        catalog.revise(firstPageRevision: 1, origin: origin)
        try resync(program: program, library: library, metric: "resync_first_page_changed")
        print("resync_first_page_changed_full_pages \(origin.requests.filter { $0.status == 200 }.count) count")
        if folder != nil { FileHandle.standardError.write(Data("kept \(base.path)\n".utf8)) }
    }

    /// The first sync, with its phases: the pages (from the first page's request to the
    /// last's: fetching and parsing) and what follows the last page's request (its parse,
    /// sizing, the merge and its commit), and the resident memory then, sampled every 50 ms.
    private func sync(program: String, library: String) throws {
        let start = Date()
        let child = try ChildProcess.start([program, "sync", "--library", library])
        var samples: [(time: Date, mib: Double)] = []
        while !child.wait(deadline: 0.05) {
            samples.append((Date(), ProcessStats(pid: child.pid).residentMiB))
        }
        let end = Date()
        let result = child.result()
        guard result.status == 0, result.signal == nil else { throw BenchmarkFailure("sync failed: \(result.stderr)") }
        FileHandle.standardError.write(Data(("sync: " + result.stdout).utf8))
        print("sync_s \(format(end.timeIntervalSince(start))) s")
        // The sync is the largest child so far (`source add` is small), so the largest
        // child's peak is its own.
        print("sync_peak_rss_mib \(format(ChildResources.largestChildPeakMiB())) MiB")
        let pages = origin.requests.filter { $0.path.hasPrefix("/catalog/") }.map(\.time)
        guard let first = pages.min(), let last = pages.max() else { return }
        print("sync_pages_s \(format(last.timeIntervalSince(first))) s")
        print("sync_after_pages_s \(format(end.timeIntervalSince(last))) s")
        let during = samples.filter { $0.time <= last }.map(\.mib).max() ?? 0
        print("sync_pages_peak_rss_mib \(format(during)) MiB")
    }

    /// `offlinefs sync` of the catalog as it is now, timed as `<metric>_s`; the origin's log
    /// then holds its requests alone.
    private func resync(program: String, library: String, metric: String) throws {
        origin.clearLog()
        let start = ContinuousClock.now
        let output = try run([program, "sync", "--library", library])
        print("\(metric)_s \(format((ContinuousClock.now - start).seconds)) s")
        FileHandle.standardError.write(Data(("\(metric): " + output).utf8))
    }

    @discardableResult
    private func run(_ command: [String], deadline: Double = 600) throws -> String {
        let result = try ChildProcess.run(command, deadline: deadline)
        guard result.status == 0, result.signal == nil else {
            throw BenchmarkFailure("\(command.joined(separator: " ")) failed (\(result.status)): \(result.stderr)")
        }
        return result.stdout
    }

    private func count(_ command: [String]) throws -> Int {
        let output = try run(command, deadline: 1800)
        guard let count = Int(output.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw BenchmarkFailure("\(command.joined(separator: " ")) printed \(output)")
        }
        return count
    }

    private func format(_ value: Double) -> String { String(format: value < 10 ? "%.3f" : "%.1f", value) }

    /// Disk space of the files under `path`, as `du` counts it.
    static func allocatedBytes(_ path: String) -> Int64 {
        var total: Int64 = 0
        let enumerator = FileManager.default.enumerator(atPath: path)
        while let name = enumerator?.nextObject() as? String {
            var info = stat()
            if lstat(path + "/" + name, &info) == 0 { total += Int64(info.st_blocks) * 512 }
        }
        return total
    }
}
