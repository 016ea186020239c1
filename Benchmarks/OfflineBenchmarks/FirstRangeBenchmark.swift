import Foundation
import OfflineEngine
import OfflineHTTP
import OfflineStore

/// Time to the first bytes of uncached files through the engine alone (no FUSE): what a
/// reader's open and first read ask of `RangeFetcher`, file after file, in a fresh library
/// whose engine started as a mount's does. The first file shows the process's one-time costs.
struct FirstRangeBenchmark {
    typealias Failure = BenchmarkFailure

    var origin = ""
    var library = ""
    var files: [String] = []
    /// What the first read asks for: the kernel's first read of a file is 128 KiB.
    var bytes: Int64 = 128 << 10

    init(arguments: [String]) throws {
        try forEachFlag(in: arguments) { flag, value in
            switch flag {
            case "--origin": origin = value.hasSuffix("/") ? value : value + "/"
            case "--library": library = value
            case "--files": files = value.split(separator: ",").map(String.init)
            case "--bytes": bytes = Int64(value) ?? bytes
            default: return false
            }
            return true
        }
        guard !origin.isEmpty, !library.isEmpty, !files.isEmpty else {
            throw Failure("--origin, --library and --files are required")
        }
    }

    func run() throws {
        let folder = URL(fileURLWithPath: library)
        try? FileManager.default.removeItem(at: folder)
        let store = try LibraryStore.open(folder: folder)
        let source = try store.addSource(name: "bench", feedURL: origin + "feed.json")
        let entries = files.map { CatalogEntry(contentID: $0, title: $0, type: .file, mediaURL: origin + $0) }
        _ = try store.mergeCatalog(sourceID: source.id, title: nil, entries: entries, isComplete: true, now: Date())
        let ids = try files.map { name -> Int64 in
            guard let item = try store.item(source: "bench", contentID: name) else { throw Failure("no item \(name)") }
            return item.id
        }
        let engine = try TransferEngine(store: store)
        engine.startThreads()
        Thread.sleep(forTimeInterval: 0.5)  // as a mount: the first open comes a while after the start

        let fetcher = engine.fetcher
        for (name, id) in zip(files, ids) {
            let done = DispatchSemaphore(value: 0)
            let outcome = Box()
            let started = ContinuousClock.now
            fetcher.startFirstWindow(itemID: id, file: "media")  // the open
            let opened = ContinuousClock.now
            fetcher.whenAvailable(itemID: id, file: "media", range: ByteRange(0, bytes), readAhead: 0,
                                  deadline: .now + .seconds(30)) { result in  // the first read
                outcome.set(result, at: ContinuousClock.now)
                done.signal()
            }
            done.wait()
            let (result, answered) = outcome.get()
            if case .failure(let error) = result { throw Failure("\(name): \(error)") }
            print(String(format: "%@: first %lld bytes in %.3f ms (open %.3f ms)", name, bytes,
                         Self.milliseconds(answered - started), Self.milliseconds(opened - started)))
        }
        engine.shutdown()
        try store.close()
    }

    static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    }

    /// The completion's result and time, handed from the engine's thread.
    private final class Box: @unchecked Sendable {
        // @unchecked: written once before the semaphore is signalled, read after the wait.
        private var result: Result<Void, FetchError> = .success(())
        private var time = ContinuousClock.now
        func set(_ result: Result<Void, FetchError>, at time: ContinuousClock.Instant) {
            self.result = result
            self.time = time
        }
        func get() -> (Result<Void, FetchError>, ContinuousClock.Instant) { (result, time) }
    }
}
