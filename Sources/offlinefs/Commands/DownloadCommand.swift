import ArgumentParser
import Foundation
import OfflineEngine
import OfflineStore

struct DownloadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "download",
        abstract: "Download items into the library's cache.",
        discussion: """
            An item is an item id, source/content-id, or a path in the mount.
            Without --wait the items are queued for the running engine. With --wait the \
            engine runs in the foreground until every item is cached (exit 0) or has stopped \
            (exit 1, with the reason). Interrupted downloads resume from the bytes on disk.
            Example: offlinefs download acme/ep-001 --wait
            """)

    @OptionGroup var options: LibraryOptions
    @Argument(help: "The items.") var references: [String]
    @Flag(help: "Run the engine here until the downloads end.") var wait = false

    func run() throws {
        if try options.sendThroughMount(references.map { .download(item: $0, options: DownloadOptions()) }) {
            guard wait else {
                print("queued \(references.count) item(s) on the running mount")
                return
            }
            return try waitThroughMount()
        }
        let library = try options.open()
        let store = library.store
        var items: [Item] = []
        for reference in references {
            do { items.append(try ItemReference.resolve(reference, in: store)) } catch { throw CLIError("\(error)") }
        }
        for item in items where item.state != .cached {
            try store.setRequested(itemID: item.id, true)
            try store.setState(itemID: item.id, state: .queued)
        }
        guard wait else {
            print("queued \(items.count) item(s); an engine downloads them (offlinefs download --wait, or a mount)")
            return
        }
        let lock: EngineLock
        do { lock = try EngineLock(folder: library.folder) } catch { throw CLIError("\(error)") }
        let engine: TransferEngine
        do { engine = try TransferEngine(store: store) } catch { throw CLIError("cannot start the engine: \(error)") }
        let parallel = (try? store.policies().maxConcurrentDownloads) ?? 3
        let results = Self.download(items.filter { $0.state != .cached }.map(\.id), with: engine.downloader, parallel: parallel)
        engine.shutdown()
        withExtendedLifetime(lock) {}
        var failures = 0
        for item in items {
            guard let result = results[item.id] else {
                print("\(item.fileName ?? item.contentID): cached")
                continue
            }
            print("\(item.fileName ?? item.contentID): \(result)")
            if !result.succeeded { failures += 1 }
        }
        if failures > 0 { throw CLIError("\(failures) of \(items.count) item(s) not downloaded") }
    }

    /// The mount's engine downloads: watch the store until every item has ended.
    private func waitThroughMount() throws {
        let store = try options.open().store
        let ids = try references.map { try ItemReference.resolve($0, in: store).id }
        let ended: Set<ItemState> = [.cached, .failed, .paused, .discovered, .deleted, .partiallyCached]
        var items: [Item] = []
        while true {
            items = try ids.compactMap { try store.item(id: $0) }
            if items.allSatisfy({ ended.contains($0.state) }) { break }
            usleep(200_000)
        }
        var failures = 0
        for item in items {
            let error = item.error.map { " (\($0.rawValue))" } ?? ""
            print("\(item.fileName ?? item.contentID): \(item.state.rawValue)\(error)")
            if item.state != .cached && item.state != .partiallyCached { failures += 1 }
        }
        if failures > 0 { throw CLIError("\(failures) of \(items.count) item(s) not downloaded") }
    }

    /// Runs downloads on threads of their own, at most `parallel` at once.
    private static func download(_ ids: [Int64], with downloader: Downloader, parallel: Int) -> [Int64: DownloadResult] {
        let slots = DispatchSemaphore(value: max(1, parallel))
        let group = DispatchGroup()
        let results = ResultTable()
        for id in ids {
            slots.wait()
            group.enter()
            let thread = Thread {
                results.set(id, downloader.download(itemID: id))
                slots.signal()
                group.leave()
            }
            thread.name = "offlinefs.download"
            thread.start()
        }
        group.wait()
        return results.all
    }
}

/// Results written by the download threads.
private final class ResultTable: @unchecked Sendable {
    // @unchecked: protected by lock.
    private let lock = NSLock()
    private var results: [Int64: DownloadResult] = [:]

    func set(_ id: Int64, _ result: DownloadResult) {
        lock.lock()
        results[id] = result
        lock.unlock()
    }

    var all: [Int64: DownloadResult] {
        lock.lock()
        defer { lock.unlock() }
        return results
    }
}
