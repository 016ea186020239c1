import Foundation
import Glibc
import OfflineEngine
import OfflineStore

/// Downloads `count` files named `file<i>.bin` from an origin through the engine (whole-file
/// downloads, `parallel` in flight, verified when checksums are given) into a fresh library,
/// and prints throughput and the engine's CPU time per GiB.
struct TransferBenchmark {
    typealias Failure = BenchmarkFailure

    var origin = ""
    var library = ""
    var count = 8
    var size: Int64 = 256 << 20
    var parallel = 4
    var checksums: [String: String] = [:]

    init(arguments: [String]) throws {
        try forEachFlag(in: arguments) { flag, value in
            switch flag {
            case "--origin": origin = value.hasSuffix("/") ? value : value + "/"
            case "--library": library = value
            case "--count": count = Int(value) ?? count
            case "--size": size = Int64(value) ?? size
            case "--parallel": parallel = Int(value) ?? parallel
            case "--checksums":
                // sha256sum output: "<hex>  <name>"
                let text = try String(contentsOfFile: value, encoding: .utf8)
                for line in text.split(separator: "\n") {
                    let parts = line.split(separator: " ", omittingEmptySubsequences: true)
                    if parts.count == 2 { checksums[String(parts[1].drop { $0 == "*" })] = String(parts[0]) }
                }
            default: return false
            }
            return true
        }
        guard !origin.isEmpty, !library.isEmpty else { throw Failure("--origin and --library are required") }
    }

    func run() throws {
        let folder = URL(fileURLWithPath: library)
        try? FileManager.default.removeItem(at: folder)
        let store = try LibraryStore.open(folder: folder)
        let source = try store.addSource(name: "bench", feedURL: origin + "feed.json")
        let names = (0..<count).map { "file\($0).bin" }
        let entries = names.map {
            CatalogEntry(contentID: $0, title: $0, type: .file, mediaURL: origin + $0, size: size, sha256: checksums[$0])
        }
        _ = try store.mergeCatalog(sourceID: source.id, title: nil, entries: entries, isComplete: true, now: Date())
        let ids = try names.map { name -> Int64 in
            guard let item = try store.item(source: "bench", contentID: name) else { throw Failure("no item \(name)") }
            return item.id
        }
        let engine = try TransferEngine(store: store)

        let cpuBefore = Self.cpuSeconds()
        let started = Date()
        let results = Self.downloadAll(ids, downloader: engine.downloader, parallel: parallel)
        let seconds = Date().timeIntervalSince(started)
        let cpu = Self.cpuSeconds() - cpuBefore
        engine.shutdown()
        try store.close()

        let failed = results.filter { !$0.succeeded }
        for result in failed { print("  item \(result.itemID): \(result)") }
        let bytes = Double(size) * Double(count - failed.count)
        let verified = checksums.isEmpty ? "size checked" : "sha256 verified"
        print(String(format: "engine: %d × %d MiB, %d in flight, %@: %.2f s, %.1f MB/s, CPU %.2f s (%.2f s/GiB)",
                     count, Int(size >> 20), parallel, verified, seconds, bytes / seconds / 1e6, cpu,
                     cpu / (bytes / Double(1 << 30))))
        if !failed.isEmpty { throw Failure("\(failed.count) download(s) failed") }
    }

    static func downloadAll(_ ids: [Int64], downloader: Downloader, parallel: Int) -> [DownloadResult] {
        let queue = WorkQueue(ids)
        let group = DispatchGroup()
        for _ in 0..<max(1, parallel) {
            group.enter()
            Thread {
                while let id = queue.take() { queue.record(downloader.download(itemID: id)) }
                group.leave()
            }.start()
        }
        group.wait()
        return queue.results
    }

    /// User + system CPU seconds of this process so far.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}

/// Item ids handed to the download threads, and their results.
private final class WorkQueue: @unchecked Sendable {
    // @unchecked: every field is protected by lock.
    private let lock = NSLock()
    private var pending: [Int64]
    private var done: [DownloadResult] = []

    init(_ ids: [Int64]) { pending = ids.reversed() }

    func take() -> Int64? {
        lock.lock()
        defer { lock.unlock() }
        return pending.popLast()
    }

    func record(_ result: DownloadResult) {
        lock.lock()
        done.append(result)
        lock.unlock()
    }

    var results: [DownloadResult] {
        lock.lock()
        defer { lock.unlock() }
        return done
    }
}
