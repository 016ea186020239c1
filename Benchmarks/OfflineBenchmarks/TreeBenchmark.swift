import Foundation
import CSystemShim
import Logging
import OfflineEngine
import OfflineFUSE
import OfflineMount
import OfflineStore

/// What a mount does before it serves, on a library of `items` items: opening the store
/// (with its integrity check) and building the tree (`MountTree.refresh`), with the tree's
/// item query and its build timed apart (CPU time of the thread, steadier than wall time on
/// a shared machine). Prints medians of `runs` runs.
///
/// `plain` items are like the bench corpus (one source, no categories, no side files);
/// otherwise every item is in a category (a fifth in a sub-category too), half have a
/// thumbnail and a tenth a subtitle track, as video catalogs do.
struct TreeBenchmark {
    let items: Int
    let plain: Bool
    let runs = 5

    init(arguments: [String]) throws {
        var items = 100_000, plain = false
        for argument in arguments {
            if argument == "--plain" { plain = true } else if let count = Int(argument), count > 0 { items = count } else {
                throw BenchmarkFailure("unknown argument \(argument)")
            }
        }
        self.items = items
        self.plain = plain
    }

    func run() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("offlinefs-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try fill(folder)

        var openTimes: [Double] = []
        for _ in 0..<3 {
            let start = ContinuousClock.now
            let store = try LibraryStore.open(folder: folder)
            openTimes.append((ContinuousClock.now - start).seconds)
            try store.close()
        }
        let store = try LibraryStore.open(folder: folder)
        defer { try? store.close() }

        var logger = Logger(label: "offlinefs-bench")
        logger.logLevel = .error
        // A new tree each run, as a mount starts: its first refresh replaces an empty tree.
        var refreshTimes: [Double] = [], cpuTimes: [Double] = []
        var snapshot: TreeSnapshot?
        var lastTree: MountTree?
        for _ in 0..<runs {
            let tree = MountTree(view: LibraryView(store: store), uid: getuid(), gid: getgid(), clock: { Date() }, logger: logger)
            let cpu = Self.threadCPUSeconds()
            let start = ContinuousClock.now
            guard tree.refresh(force: true) else { throw BenchmarkFailure("the tree was not built") }
            refreshTimes.append((ContinuousClock.now - start).seconds)
            cpuTimes.append(Self.threadCPUSeconds() - cpu)
            snapshot = tree.snapshot
            lastTree = tree
        }
        guard let snapshot else { throw BenchmarkFailure("no runs") }
        // A rebuild after a change, as a running mount does: the rows stream into a tree sized
        // like the old one, which is held meanwhile.
        var rebuildTimes: [Double] = []
        if let tree = lastTree {
            for _ in 0..<runs {
                let cpu = Self.threadCPUSeconds()
                guard tree.refresh(force: true) else { throw BenchmarkFailure("the tree was not rebuilt") }
                rebuildTimes.append(Self.threadCPUSeconds() - cpu)
            }
        }
        let listed = snapshot.folders[NodeID.source(1).inode]?.children.filter {
            if case .itemFile(_, 0)? = NodeID(inode: $0.inode) { true } else { false }
        }.count ?? 0
        guard snapshot.items.count == items, listed == items else {
            throw BenchmarkFailure("the tree lists \(snapshot.items.count) items, \(listed) in the source folder, of \(items)")
        }

        let (readTimes, buildTimes) = try timeReadAndBuild(store)
        // What an idle mount pays every `refreshInterval` (1 s) to learn that nothing changed.
        var checkTimes: [Double] = []
        for _ in 0..<20 {
            let cpu = Self.threadCPUSeconds()
            _ = try store.changeToken()
            checkTimes.append(Self.threadCPUSeconds() - cpu)
        }
        let label = "tree\(plain ? "-plain" : "")"
        print("\(label) items \(items)")
        print(String(format: "\(label) store_open_ms %.1f (median of 3; includes the integrity check)", median(openTimes) * 1000))
        print(String(format: "\(label) refresh_ms %.1f (min %.1f, median of \(runs))", median(refreshTimes) * 1000,
                     refreshTimes.min()! * 1000))
        print(String(format: "\(label) refresh_cpu_ms %.1f", median(cpuTimes) * 1000))
        print(String(format: "\(label) rebuild_cpu_ms %.1f (a running mount's rebuild after a change)", median(rebuildTimes) * 1000))
        print(String(format: "\(label) read_cpu_ms %.1f (the item query)", median(readTimes) * 1000))
        print(String(format: "\(label) build_cpu_ms %.1f (TreeBuilder.build)", median(buildTimes) * 1000))
        print(String(format: "\(label) change_check_cpu_ms %.2f (the store's change token, checked every second)",
                     median(checkTimes) * 1000))
        print("\(label) peak_rss_mib \(Int(Resources.peakResidentMiB()))")
        let treeMiB = try residentTreeMiB(store, logger: logger)
        print(String(format: "\(label) tree_mib %.1f (resident with one tree held, less without; %.0f bytes an item)",
                     treeMiB, treeMiB * 1_048_576 / Double(items)))
    }

    /// What one tree holds resident, as an idle mount holds it: the process's resident memory
    /// with a tree built, less without one, each after malloc gave back what it could (the
    /// store's cache is warm by then, so it does not count).
    private func residentTreeMiB(_ store: LibraryStore, logger: Logger) throws -> Double {
        func resident() -> Double {
            _ = csystem_release_free_memory()
            return ProcessStats(pid: getpid()).residentMiB
        }
        let before = resident()
        let tree = MountTree(view: LibraryView(store: store), uid: getuid(), gid: getgid(), clock: { Date() }, logger: logger)
        guard tree.refresh(force: true) else { throw BenchmarkFailure("the tree was not built") }
        let after = resident()
        withExtendedLifetime(tree) {}
        return after - before
    }

    /// The tree's item query and its build, timed apart (the rest of a refresh is a few small reads).
    private func timeReadAndBuild(_ store: LibraryStore) throws -> (read: [Double], build: [Double]) {
        let sources = try store.sources(), categories = try store.categories()
        var reads: [Double] = [], builds: [Double] = []
        for _ in 0..<runs {
            var start = Self.threadCPUSeconds()
            let items = try store.itemOutlines()
            reads.append(Self.threadCPUSeconds() - start)
            start = Self.threadCPUSeconds()
            let tree = TreeBuilder.build(sources: sources, categories: categories, items: items, uid: 0, gid: 0,
                                         folderTime: Timestamp(seconds: 0), recentCutoff: Date())
            builds.append(Self.threadCPUSeconds() - start)
            guard tree.items.count == self.items else { throw BenchmarkFailure("built \(tree.items.count) items") }
        }
        return (reads, builds)
    }

    /// A library with one source of `items` items, merged in one catalog.
    private func fill(_ folder: URL) throws {
        let store = try LibraryStore.open(folder: folder)
        defer { try? store.close() }
        let source = try store.addSource(name: "bench", feedURL: "http://127.0.0.1:1/feed.rss")
        let published = Date(timeIntervalSince1970: 1_714_566_600)
        let entries = (0..<items).map { index in
            var categories: [[String]] = []
            if !plain {
                categories.append(["Topic \(index % 20)"])
                if index % 5 == 0 { categories.append(["Topic \(index % 20)", "Part \(index % 3)"]) }
            }
            let subtitles = !plain && index % 10 == 0
                ? [SubtitleTrack(language: "en", url: "http://127.0.0.1:1/subs/\(index).vtt", format: "vtt")] : []
            return CatalogEntry(
                contentID: "episode-\(index)", title: "Episode \(index): a reasonably long title like real feeds have",
                type: .audio, mediaURL: "http://127.0.0.1:1/media/episode-\(index).mp3", size: 1_000_000 + Int64(index),
                mimeType: "audio/mpeg", duration: 2537, publishedAt: published.addingTimeInterval(Double(index)),
                summary: "Notes for episode \(index), as feeds carry.",
                thumbnailURL: !plain && index % 2 == 0 ? "http://127.0.0.1:1/thumbs/\(index).jpg" : nil,
                subtitles: subtitles, categoryPaths: categories)
        }
        _ = try store.mergeCatalog(sourceID: source.id, title: "Bench", entries: entries, isComplete: true, now: Date())
    }

    private func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

    /// CPU time of this thread: steadier than wall time on a machine shared with other work.
    private static func threadCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
