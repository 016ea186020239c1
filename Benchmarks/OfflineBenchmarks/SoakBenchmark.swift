import Foundation
import OfflineTestSupport
import Synchronization

/// A mount kept up as for a month, compressed: while it serves, one thread opens items in
/// turn and reads their first 4 KiB (100,000 items by default, round and round), one lists
/// a category folder and stats its first hundred files, and one asks the mount for a sync
/// every few seconds; once a minute the catalog's first page changes, so one of those syncs
/// fetches and merges that page (the other pages answer `304`). Each minute prints the mount
/// process's resident memory, open descriptors and threads; the end prints how much they
/// moved from minute 5 on. The cache is capped (`cache-limit`) so eviction runs too.
struct SoakBenchmark {
    private let origin: TestOrigin
    var minutes = 30
    var items = 100_000
    var syncSeconds = 5.0
    var program: String?

    init(arguments: [String]) throws {
        origin = try TestOrigin()
        try forEachFlag(in: arguments) { flag, value in
            switch flag {
            case "--minutes": minutes = try positiveCount(flag, value)
            case "--items": items = try positiveCount(flag, value)
            case "--sync-seconds":
                guard let seconds = Double(value), seconds > 0 else { throw BenchmarkFailure("--sync-seconds needs seconds") }
                syncSeconds = seconds
            case "--offlinefs": program = value
            default: return false
            }
            return true
        }
    }

    /// What the workers did, read once a minute.
    private final class Counters: Sendable {
        let stop = Atomic<Bool>(false)
        let reads = Atomic<Int>(0)
        let listings = Atomic<Int>(0)
        let syncs = Atomic<Int>(0)
        let failures = Atomic<Int>(0)
        let lastFailure = Mutex<String?>(nil)

        func fail(_ what: String) {
            failures.add(1, ordering: .relaxed)
            lastFailure.withLock { $0 = what }
        }
    }

    func run() throws {
        let program = try OfflineFSProgram.locate(program)
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("offlinefs-soak-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: base) }
        defer { origin.stop() }
        let bench = try MountedBenchLibrary(items: items, program: program, base: base, origin: origin)
        let (mount, mountpoint) = (bench.mount, bench.mountpoint)
        defer { try? mount.stop() }
        print("soak items \(items), minutes \(minutes), a sync asked every \(syncSeconds) s, cache-limit 256M")
        // `sockets` are among `fds`; `workers` (libdispatch's) and `fuse` (libfuse's) among `threads`.
        // `rss_low_mib`: the lowest of the minute's samples, one a second: what the mount holds
        // between a merge's or an eviction's transient buffers, which `rss_mib` may catch.
        print("minute rss_mib fds threads reads listings syncs failures cache_mib sockets workers fuse rss_low_mib")

        let counters = Counters()
        let done = DispatchGroup()
        func start(_ work: @escaping @Sendable () -> Void) {
            done.enter()
            Thread { work(); done.leave() }.start()
        }
        start { [items] in Self.readItems(items, in: mountpoint, counters) }
        start { Self.listFolders(in: mountpoint, counters) }
        start { [syncSeconds] in Self.askForSyncs(every: syncSeconds, in: mountpoint, counters) }

        let stats = ProcessStats(pid: mount.pid)
        var samples: [(rss: Double, fds: Int, threads: Int, sockets: Int, workers: Int, fuse: Int, low: Double)] = []
        let start = Date()
        for minute in 1...minutes {
            // The catalog's first page changes once a minute: the next sync merges it and asks
            // for the other pages conditionally (they answer 304).
            bench.catalog.revise(firstPageRevision: minute, origin: origin)
            let due = start.addingTimeInterval(Double(minute) * 60)
            var low = Double.infinity
            while Date() < due {
                usleep(UInt32(min(1, max(0, due.timeIntervalSinceNow)) * 1_000_000))
                low = min(low, stats.residentMiB)
            }
            guard !mount.process.wait(deadline: 0) else { throw BenchmarkFailure("the mount ended: \(mount.process.result().stderr)") }
            let descriptors = stats.descriptorsAndSockets
            let pools = stats.pooledThreads
            let sample = (rss: stats.residentMiB, fds: descriptors.all, threads: stats.threads,
                          sockets: descriptors.sockets, workers: pools.dispatch, fuse: pools.fuse, low: low)
            samples.append(sample)
            print(String(format: "%d %.1f %d %d %d %d %d %d %.0f %d %d %d %.1f", minute, sample.rss, sample.fds, sample.threads,
                         counters.reads.load(ordering: .relaxed), counters.listings.load(ordering: .relaxed),
                         counters.syncs.load(ordering: .relaxed), counters.failures.load(ordering: .relaxed),
                         Self.diskMiB(bench.library + "/cache"), sample.sockets, sample.workers, sample.fuse, sample.low))
            fflush(nil)  // each minute's line now, when stdout is a file
        }
        counters.stop.store(true, ordering: .relaxed)
        done.wait()
        if let failure = counters.lastFailure.withLock({ $0 }) { print("soak last_failure \(failure)") }

        let steady = samples.dropFirst(min(4, samples.count - 1))  // minute 5 on
        let rss = steady.map(\.rss)
        let spread = (rss.max()! - rss.min()!) / rss.min()! * 100
        print(String(format: "soak_rss_spread_pct %.1f %% (minute %d to %d: %.1f to %.1f MiB)", spread,
                     samples.count - steady.count + 1, samples.count, rss.min()!, rss.max()!))
        let lows = steady.map(\.low)
        print(String(format: "soak_rss_low_spread_pct %.1f %% (minute %d to %d: %.1f to %.1f MiB)",
                     (lows.max()! - lows.min()!) / lows.min()! * 100, samples.count - steady.count + 1, samples.count,
                     lows.min()!, lows.max()!))
        print("soak_fds \(steady.map(\.fds).min()!)...\(steady.map(\.fds).max()!) count")
        print("soak_threads \(steady.map(\.threads).min()!)...\(steady.map(\.threads).max()!) count")
        // Without the sockets and the pools' workers: what the mount itself holds open and runs.
        let own = (fds: steady.map { $0.fds - $0.sockets }, threads: steady.map { $0.threads - $0.workers - $0.fuse })
        print("soak_fds_without_sockets \(own.fds.min()!)...\(own.fds.max()!) count")
        print("soak_fuse_workers \(steady.map(\.fuse).min()!)...\(steady.map(\.fuse).max()!) count")
        print("soak_threads_without_pool_workers \(own.threads.min()!)...\(own.threads.max()!) count")
        print("soak_failures \(counters.failures.load(ordering: .relaxed)) count")
    }

    /// The disk space the files under `folder` take (what `cache-limit` holds down), by `du`.
    private static func diskMiB(_ folder: String) -> Double {
        // (A file evicted while `du` walks makes it complain and exit 1; its sum still stands.)
        guard let result = try? ChildProcess.run(["du", "-sk", folder], deadline: 60),
              let kib = Double(result.stdout.prefix { !$0.isWhitespace }) else { return .nan }
        return kib / 1024
    }

    /// Opens item after item and reads its first 4 KiB, round and round; not item 0, which
    /// `revise` renames once a minute.
    private static func readItems(_ items: Int, in mountpoint: String, _ counters: Counters) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        var index = 1
        while !counters.stop.load(ordering: .relaxed) {
            let path = mountpoint + "/sources/bench/" + BenchCatalog.fileName(index)
            let fd = open(path, O_RDONLY)
            if fd < 0 {
                counters.fail("open \(path): errno \(errno)")
            } else {
                if pread(fd, &buffer, buffer.count, 0) != buffer.count { counters.fail("read \(path): errno \(errno)") }
                close(fd)
                counters.reads.add(1, ordering: .relaxed)
            }
            index = index + 1 < items ? index + 1 : 1
        }
    }

    /// Lists one category folder after another and stats the first hundred files of each.
    private static func listFolders(in mountpoint: String, _ counters: Counters) {
        var category = 0
        while !counters.stop.load(ordering: .relaxed) {
            let folder = mountpoint + "/categories/Category \(category)"
            if let names = try? FileManager.default.contentsOfDirectory(atPath: folder) {
                var info = stat()
                for name in names.prefix(100) where stat(folder + "/" + name, &info) != 0 {
                    counters.fail("stat \(folder)/\(name): errno \(errno)")
                }
                counters.listings.add(1, ordering: .relaxed)
            } else {
                counters.fail("list \(folder)")
            }
            category = (category + 1) % 100
        }
    }

    /// Asks the mount for a sync (a `sync` line in `.control`) every `seconds`.
    private static func askForSyncs(every seconds: Double, in mountpoint: String, _ counters: Counters) {
        while !counters.stop.load(ordering: .relaxed) {
            do {
                try Data("sync bench\n".utf8).write(to: URL(fileURLWithPath: mountpoint + "/.control"))
                counters.syncs.add(1, ordering: .relaxed)
            } catch {
                counters.fail("sync: \(error)")
            }
            // The pace of the workload, not a wait for something to happen; in steps, so the
            // end of the run does not wait for a long pace (`--sync-seconds 100000`: no syncs).
            let due = Date().addingTimeInterval(seconds)
            while !counters.stop.load(ordering: .relaxed), Date() < due { usleep(100_000) }
        }
    }
}
