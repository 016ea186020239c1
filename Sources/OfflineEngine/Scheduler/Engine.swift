import Dispatch
import Foundation
public import Logging
import OfflineHTTP
import OfflineStore
import Synchronization

/// The running engine of one library: the library lock, the transfer machinery, licences and
/// the scheduler. `init` creates no thread (a mount may daemonize after it); `start()` does.
/// One per library at a time: `init` takes `EngineLock` and throws naming the holder.
public final class Engine: Sendable {
    public let library: Library
    public let lock: EngineLock
    public let transfers: TransferEngine
    public let licences: Licences
    /// Resume points and watched marks from players' reads.
    public let playback: PlayTracker
    /// The `hook` policy's command, run on events.
    public let hooks: HookRunner
    public let scheduler: Scheduler
    public let clock: any EngineClock
    /// Deletes and evictions waiting for the item's last reader to close (as unlink waits).
    private let deferred = Mutex<[Int64: StopIntent]>([:])

    public var store: LibraryStore { library.store }

    /// - Parameter logger: where the hooks' failures and the event log's errors are logged.
    public init(library: Library, clock: any EngineClock = SystemClock(),
                configuration: SchedulerConfiguration = SchedulerConfiguration(),
                fetchSettings: FetchSettings = FetchSettings(), logger: Logger = Logger(label: "offlinefs")) throws {
        self.library = library
        self.clock = clock
        lock = try EngineLock(folder: library.folder)
        transfers = try TransferEngine(store: library.store, settings: fetchSettings,
                                       attemptsPerDownload: configuration.attemptsPerDownload)
        licences = Licences(store: library.store, client: library.client, clock: clock)
        scheduler = Scheduler(store: library.store, transfers: transfers, licences: licences, client: library.client,
                              syncSettings: library.syncSettings, clock: clock, configuration: configuration)
        playback = PlayTracker(store: library.store, licences: licences, clock: clock, speed: configuration.playbackSpeed)
        hooks = HookRunner(store: library.store, settings: configuration.hooks, logger: logger)
        let scheduler = scheduler, playback = playback
        transfers.fetcher.onPlayback { itemID, size in playback.start(itemID: itemID, size: size) }
        licences.onChange { _ in scheduler.poke() }
        transfers.fetcher.onBytesClaimed { scheduler.cacheGrew() }
        transfers.fetcher.room.onShortage { scheduler.spaceRanOut() }
        transfers.fetcher.onLastReaderClosed { [weak self] itemID in self?.lastReaderClosed(itemID) }
    }

    /// Starts the scheduler thread (and the transfer threads, so that a mount's first read does
    /// not wait for them). Downloads a crash left `downloading` resume as `queued`.
    public func start() {
        transfers.startThreads()
        scheduler.spawn("ofs-sweep") { [library, fetcher = transfers.fetcher] in
            library.removeOrphanCacheFolders(inUse: fetcher.isOpen)
        }
        for item in (try? store.items(inStates: [.downloading])) ?? [] {
            _ = try? store.setState(itemID: item.id, state: .queued)
        }
        scheduler.start()
        hooks.start()
    }

    /// Stops the scheduler and every transfer; interrupted downloads stay `queued`.
    /// - Parameter finishingHooks: run the hook for every event recorded until the end
    ///   first (a process that ends when its downloads do), else stop it at once.
    public func stop(finishingHooks: Bool = false) {
        if !finishingHooks { hooks.stop() }
        scheduler.stop()
        playback.drain()
        licences.drain()
        if finishingHooks { hooks.stop(finishing: true) }
        transfers.shutdown()
    }

    /// Performs commands with this engine.
    public var commands: LibraryCommands { LibraryCommands(library: library, engine: self) }

    // MARK: - Used by LibraryCommands

    /// Forgets a source and its items (`Library.removeSource`), then their files. A running
    /// download of one stops first (its end writes to its item); the files of one a reader
    /// has open go at its last close, as unlink waits.
    func removeSource(name: String) throws {
        if let source = try store.source(named: name) {
            for id in scheduler.runningItems where (try? store.item(id: id))?.sourceID == source.id {
                let settled = DispatchSemaphore(value: 0)
                if scheduler.stopRunning(itemID: id, .pause, settled: settled) {
                    _ = settled.wait(timeout: .now() + scheduler.configuration.commandStopWait)
                }
            }
        }
        let open = scheduler.forgetFiles(ofRemoved: try store.removeSource(name: name))
        deferred.withLock { for id in open { $0[id] = .delete } }
        scheduler.poke()
    }

    /// Stops what runs for the item and applies `intent` now, or when its download returns,
    /// or (delete, evict) at its last close.
    func stop(_ item: Item, _ intent: StopIntent) throws {
        let dropsFiles = switch intent { case .delete, .evict: true; default: false }
        if dropsFiles, transfers.fetcher.isOpen(itemID: item.id) {
            deferred.withLock { $0[item.id] = intent }
            if intent == .delete {
                // The tombstone is visible at once; the bytes go at the last close.
                try? store.setRequested(itemID: item.id, false)
                _ = try? store.setState(itemID: item.id, state: .deleted)
            }
            return
        }
        defer { scheduler.poke() }
        // A running download applies the intent as its thread returns: waiting for that (a
        // flush, a fraction of a second) lets a script read the new state as soon as its
        // command returns.
        let settled = DispatchSemaphore(value: 0)
        if scheduler.stopRunning(itemID: item.id, intent, settled: settled) {
            _ = settled.wait(timeout: .now() + scheduler.configuration.commandStopWait)
        } else {
            try scheduler.apply(intent, to: item)
        }
    }

    private func lastReaderClosed(_ itemID: Int64) {
        guard let intent = deferred.withLock({ $0.removeValue(forKey: itemID) }) else { return }
        switch intent {
        case .delete: try? Scheduler.removeFiles(of: itemID, transfers: transfers, store: store)
        default: if let item = try? store.item(id: itemID) { try? scheduler.apply(intent, to: item) }
        }
        scheduler.poke()
    }
}
