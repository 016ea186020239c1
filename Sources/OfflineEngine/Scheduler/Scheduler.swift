import CSystemShim
import Dispatch
import Foundation
import OfflineHTTP
import OfflineStore
import Synchronization

// Lock order: `state` is a leaf. No store call, clock call, transfer call or callback runs
// while it is held; ticks read the store first, then decide under the lock.

/// The loop deciding what runs (DESIGN §5 "Scheduler"): which requested items download now
/// (slots, policies, space, back-off), metadata lookups for `metadata-pending` items, licence
/// expiry, periodic syncs. One thread of its own runs `tick()` whenever something changed (a
/// command, a finished download, a timer on the engine clock); downloads run on threads of
/// their own. Every wait is a timer on the injected `EngineClock`.
public final class Scheduler: Sendable {
    let store: LibraryStore
    let transfers: TransferEngine
    let licences: Licences
    /// `progress` lines for running downloads.
    let progress: ProgressEvents
    /// The running downloads' speeds, measured every second while they run.
    public var downloadSpeeds: SpeedMeter { progress.speeds }
    let clock: any EngineClock
    let configuration: SchedulerConfiguration
    let space: SpaceManager
    let lookup: MetadataLookup
    let syncer: CatalogSync
    /// NetworkManager's metered flag, for the network rule.
    let metered: MeteredWatch

    struct State {
        var started = false
        var stopped = false
        var running: [Int64: Date] = [:]
        var intents: [Int64: StopIntent] = [:]
        /// Told once a stopped download's intent is applied (`stopRunning(…, settled:)`).
        var stopWaiters: [Int64: [DispatchSemaphore]] = [:]
        var retries: [Int64: RetryState] = [:]
        var lookups: [Int64: RetryState] = [:]
        var lookupsRunning: Set<Int64> = []
        var thumbnailsRunning: Set<Int64> = []
        /// The expiry each item's `licence-expiring` event was written for (once per expiry).
        var expiryWarnings: [Int64: Date] = [:]
        var syncRequests = SyncRequests()
        /// Bytes were claimed in the cache since the last space check (true at start).
        var cacheGrew = true
        var lastSpaceCheck: Date?
        /// A read found no room to cache its bytes since the last space check.
        var spaceRanOut = false
        var timer: (any ClockTimer)?
        var timerDate: Date?
        var random: SplitMix64
        var ticks = 0
        /// `tickNow()` callers wait for a tick that began after they asked.
        var tickRequests = 0
        var ticksServed = 0
    }
    let state: Mutex<State>
    private let wake: DispatchSemaphore
    let workers = DispatchGroup()
    private let loopDone = DispatchSemaphore(value: 0)
    private let tickListeners = Mutex<[@Sendable () -> Void]>([])

    init(store: LibraryStore, transfers: TransferEngine, licences: Licences, client: HTTPClient,
         syncSettings: SyncSettings, clock: any EngineClock, configuration: SchedulerConfiguration) {
        self.store = store
        self.transfers = transfers
        self.licences = licences
        self.clock = clock
        self.configuration = configuration
        space = SpaceManager(store: store, transfers: transfers, freeSpace: configuration.freeSpace,
                             evictionsPerCheck: configuration.evictionsPerCheck)
        progress = ProgressEvents(store: store, clock: clock, originSize: { [fetcher = transfers.fetcher] itemID in
            fetcher.knownTotal(itemID: itemID, file: "media")
        })
        let now: @Sendable () -> Date = { clock.now() }
        syncer = CatalogSync(store: store, client: client, settings: syncSettings, hls: transfers.hls, now: now)
        lookup = MetadataLookup(store: store, client: client, settings: syncSettings, syncer: syncer, now: now)
        let seed = configuration.jitterSeed ?? UInt64.random(in: .min ... .max)
        state = Mutex(State(random: SplitMix64(seed: seed)))
        let wake = DispatchSemaphore(value: 0)
        self.wake = wake
        metered = MeteredWatch(settings: .init(busAddress: configuration.systemBusAddress, reconnect: configuration.busReconnect,
                                               firstAnswerWait: configuration.busFirstAnswerWait)) { wake.signal() }
    }

    // MARK: - Life cycle

    /// Starts the scheduler thread (after any daemonizing fork).
    func start() {
        let first = state.withLock { s -> Bool in
            defer { s.started = true }
            return !s.started && !s.stopped
        }
        guard first else { return }
        metered.start()
        Thread { [self] in
            csystem_name_this_thread("ofs-scheduler")
            while true {
                wake.wait()
                let (stopped, request) = state.withLock { ($0.stopped, $0.tickRequests) }
                if stopped { break }
                tick()
                state.withLock { $0.ticksServed = max($0.ticksServed, request) }
                for listener in tickListeners.withLock({ $0 }) { listener() }
            }
            loopDone.signal()
        }.start()
        poke()
    }

    /// Stops deciding, stops running downloads (they stay `queued` for the next engine) and
    /// waits for every worker thread.
    func stop() {
        let (wasStarted, running, timer) = state.withLock { s -> (Bool, [Int64], (any ClockTimer)?) in
            guard !s.stopped else { return (false, [], nil) }
            s.stopped = true
            for id in s.running.keys { s.intents[id] = .shutdown }
            return (s.started, Array(s.running.keys), s.timer)
        }
        timer?.cancel()
        metered.stop()
        for id in running { transfers.downloader.cancel(itemID: id) }
        if wasStarted {
            wake.signal()
            loopDone.wait()
        }
        workers.wait()
    }

    /// Asks for a tick soon (a command or a policy changed).
    public func poke() {
        wake.signal()
    }

    /// Called after every tick (tests wait on it instead of sleeping).
    public func onTick(_ listener: @escaping @Sendable () -> Void) {
        tickListeners.withLock { $0.append(listener) }
    }

    /// Runs a tick and returns once it is done (tests: "the scheduler has seen this").
    /// Returns at once when the scheduler is not running.
    public func tickNow() {
        let target = state.withLock { s -> Int? in
            guard s.started, !s.stopped else { return nil }
            s.tickRequests += 1
            return s.tickRequests
        }
        guard let target else { return }
        poke()
        while state.withLock({ $0.ticksServed < target && !$0.stopped }) { usleep(500) }
    }

    /// Ticks run so far.
    public var tickCount: Int { state.withLock { $0.ticks } }

    /// Items whose download thread is running.
    public var runningItems: Set<Int64> { state.withLock { Set($0.running.keys) } }

    /// Retries spent on an item since its last explicit request.
    public func attempts(itemID: Int64) -> Int { state.withLock { $0.retries[itemID]?.attempts ?? 0 } }

    /// Forgets an item's retry and lookup bookkeeping (an explicit download or resume).
    func resetRetries(itemID: Int64) {
        state.withLock {
            $0.retries[itemID] = nil
            $0.lookups[itemID] = nil
        }
    }

    /// Asks a running download to stop and apply `intent` when it returns; `settled` is
    /// signalled once it has. False when the item is not running (the caller applies the
    /// intent itself).
    func stopRunning(itemID: Int64, _ intent: StopIntent, settled: DispatchSemaphore? = nil) -> Bool {
        let running = state.withLock { s -> Bool in
            guard s.running[itemID] != nil else { return false }
            s.intents[itemID] = intent
            if let settled { s.stopWaiters[itemID, default: []].append(settled) }
            return true
        }
        if running { transfers.downloader.cancel(itemID: itemID) }
        return running
    }

    /// Stops a running download that a network or power rule now holds back, unless a
    /// command has already asked it to stop (the user's intent wins).
    func holdBack(itemID: Int64, rule: String) {
        let stop = state.withLock { s -> Bool in
            guard s.running[itemID] != nil, s.intents[itemID] == nil else { return false }
            s.intents[itemID] = .holdBack(rule: rule)
            return true
        }
        if stop { transfers.downloader.cancel(itemID: itemID) }
    }

    /// What the system says now: the metered flag the bus thread keeps, and the power
    /// supplies, read only while a power rule may hold.
    func conditions(_ policies: PolicySet) -> NetworkPowerRules.Conditions {
        let power = NetworkPowerRules.readsPower(policies) ? PowerSupply.read(folder: configuration.powerSupplyFolder) : .mains
        return NetworkPowerRules.Conditions(metered: metered.isMetered, power: power)
    }

    // MARK: - The tick

    func tick() {
        let now = clock.now()
        var wakeAt: [Date] = []
        let policies = (try? store.policies()) ?? .defaults
        expireLicences(now: now, wakeAt: &wakeAt)
        resolvePending(now: now, wakeAt: &wakeAt)
        evictWatched(now: now, after: policies.deleteWatchedAfter, wakeAt: &wakeAt)
        keepCacheWithinLimits(now: now, policies: policies, wakeAt: &wakeAt)
        scheduleDownloads(now: now, policies: policies, wakeAt: &wakeAt)
        if configuration.periodicSync { syncDueSources(now: now, interval: policies.syncInterval, wakeAt: &wakeAt) }
        armTimer(at: wakeAt.min())
        state.withLock { $0.ticks += 1 }
    }

    /// How often at most the cache is checked against its limits while programs stream.
    static let spaceCheckInterval: TimeInterval = 1

    /// Bytes were claimed in the cache: the next tick checks the limits (streamed bytes count
    /// against them too, and only eviction takes them away).
    func cacheGrew() {
        let first = state.withLock { s -> Bool in
            defer { s.cacheGrew = true }
            return !s.cacheGrew
        }
        if first { poke() }
    }

    /// A read found no room on the disk for its bytes: the next tick evicts streamed items
    /// until streams have room again (`SpaceManager.roomAfterShortage`), whenever the last
    /// check ran; the read asks again after.
    func spaceRanOut() {
        state.withLock { $0.spaceRanOut = true }
        poke()
    }

    /// Evicts what programs streamed past `cache-limit` or into `free-space-reserve`, at most
    /// once per `spaceCheckInterval` (the check sums every item's bytes) unless a read ran
    /// out of space or the last check stopped at its cap.
    private func keepCacheWithinLimits(now: Date, policies: PolicySet, wakeAt: inout [Date]) {
        let (check, ranOut) = state.withLock { s -> (Bool, Bool) in
            let ranOut = s.spaceRanOut
            guard s.cacheGrew || ranOut else { return (false, false) }
            if !ranOut, let last = s.lastSpaceCheck, now < last.addingTimeInterval(Self.spaceCheckInterval) {
                wakeAt.append(last.addingTimeInterval(Self.spaceCheckInterval))
                return (false, false)
            }
            s.cacheGrew = false
            s.spaceRanOut = false
            s.lastSpaceCheck = now
            return (true, ranOut)
        }
        guard check, space.keepWithinLimits(policies: policies, busy: runningItems,
                                            room: ranOut ? SpaceManager.roomAfterShortage : 0) else { return }
        // Still over a limit after evicting some (its cap, or candidates skipped): on at the
        // next tick, without waiting out the interval. Programs that read a library fast cache
        // more items a second than one check evicts (docs/perf-log.md, 2026-11-30's soak).
        state.withLock { s in
            s.cacheGrew = true
            s.lastSpaceCheck = nil
        }
        poke()
    }

    /// Keeps one clock timer at the earliest time something waits for.
    private func armTimer(at date: Date?) {
        let (old, arm) = state.withLock { s -> ((any ClockTimer)?, Bool) in
            if s.timerDate == date { return (nil, false) }
            let old = s.timer
            s.timer = nil
            s.timerDate = date
            return (old, date != nil && !s.stopped)
        }
        old?.cancel()
        guard arm, let date else { return }
        let timer = clock.schedule(at: date) { [self] in
            state.withLock { if $0.timerDate == date { $0.timerDate = nil; $0.timer = nil } }
            poke()
        }
        state.withLock { if $0.timerDate == date { $0.timer = timer } }
    }

    /// Items whose licence ran out stop (`failed`, `licence-expired`); bytes are kept so
    /// `renew` makes a cached item playable again (and a discovered one discovered again).
    private func expireLicences(now: Date, wakeAt: inout [Date]) {
        guard let licences = try? store.expiringLicences() else { return }
        for licence in licences {
            guard let expiry = licence.expiresAt else { continue }
            guard expiry <= now else {
                wakeAt.append(expiry)
                warnOfExpiry(licence, expiry: expiry, now: now, wakeAt: &wakeAt)
                continue
            }
            // A discovered item counts once its licence was acquired (`acquire`, a first
            // playback): its expiry is news, as a downloaded rental's is.
            guard let item = try? store.item(id: licence.itemID), item.state != .deleted,
                  item.state != .discovered || licence.acquiredAt != nil, item.error != .licenceExpired else { continue }
            if stopRunning(itemID: item.id, .licenceExpired) { continue }
            _ = try? store.setState(itemID: item.id, state: .failed, error: .licenceExpired,
                                    detail: "the licence expired at \(LicenceClock.iso(expiry))")
        }
    }

    /// One `licence-expiring` event per expiry, an hour before it (the `hook` runs on it).
    private func warnOfExpiry(_ licence: Licence, expiry: Date, now: Date, wakeAt: inout [Date]) {
        let warnAt = expiry.addingTimeInterval(-3600)
        guard warnAt <= now else {
            wakeAt.append(warnAt)
            return
        }
        let first = state.withLock { s -> Bool in
            guard s.expiryWarnings[licence.itemID] != expiry else { return false }
            s.expiryWarnings[licence.itemID] = expiry
            return true
        }
        guard first, let item = try? store.item(id: licence.itemID), item.state != .deleted else { return }
        _ = try? store.appendEvent(kind: .licenceExpiring, itemID: item.id, sourceID: item.sourceID,
                                   message: "\(item.fileName ?? item.contentID): the licence expires at \(LicenceClock.iso(expiry))")
    }

    /// `metadata-pending`: items whose metadata arrived become `queued`; the others get a
    /// lookup now or at their retry time, and `failed`/`content-not-found` after the last.
    private func resolvePending(now: Date, wakeAt: inout [Date]) {
        guard let pending = try? store.items(inStates: [.metadataPending]) else { return }
        for item in pending {
            if item.mediaURL != nil {
                state.withLock { _ = $0.lookups.removeValue(forKey: item.id) }
                _ = try? store.setState(itemID: item.id, state: .queued)
                continue
            }
            let due = state.withLock { s -> Date? in
                if s.lookupsRunning.contains(item.id) { return .distantFuture }
                let next = s.lookups[item.id]?.next ?? .distantPast
                if next <= now, !s.stopped {
                    s.lookupsRunning.insert(item.id)
                    return nil
                }
                return next
            }
            if let due {
                if due != .distantFuture { wakeAt.append(due) }
                continue
            }
            spawn("ofs-lookup") { [self] in runLookup(item) }
        }
    }

    private func runLookup(_ item: Item) {
        let found = lookup.attempt(item)
        let now = clock.now()
        let exhausted = state.withLock { s -> Bool in
            s.lookupsRunning.remove(item.id)
            // Kept, never due, for the same reason as an exhausted one (below).
            if found { s.lookups[item.id] = RetryState(next: .distantFuture); return false }
            var retry = s.lookups[item.id] ?? RetryState()
            retry.attempts += 1
            let exhausted = retry.attempts > configuration.metadataRetries
            // An exhausted record stays (never due) until a new request resets it: a tick that
            // read the item as pending before it turns `failed` must not see "no record yet"
            // and start a fifth lookup.
            retry.next = exhausted ? .distantFuture : now.addingTimeInterval(configuration.metadataRetryDelay)
            s.lookups[item.id] = retry
            return exhausted
        }
        if found {
            _ = try? store.setState(itemID: item.id, state: .queued)
        } else if exhausted {
            _ = try? store.setState(itemID: item.id, state: .failed, error: .contentNotFound,
                                    detail: "no metadata for '\(item.contentID)' after \(configuration.metadataRetries + 1) lookups")
        }
        poke()
    }

    /// Asks for every sync that is due, keeping the next due time. Not while syncs run: a
    /// source being synced is still due until its sync ends, and asking again would sync it
    /// twice in a row (the runner's end wakes the scheduler).
    private func syncDueSources(now: Date, interval: TimeInterval, wakeAt: inout [Date]) {
        guard !state.withLock({ $0.syncRequests.running }), let sources = try? store.sources() else { return }
        for source in sources where source.subscribed {
            let due = (source.lastSyncAt ?? .distantPast).addingTimeInterval(interval)
            guard due <= now else {
                wakeAt.append(due)
                continue
            }
            requestSync(source.name)
        }
    }

    /// Syncs `sourceName` (nil: every subscribed source) on the sync thread, now or after the
    /// round it is running. Asks made meanwhile, by commands or by the timer, run together
    /// once (`SyncRequests`): a source is never synced twice at once.
    func requestSync(_ sourceName: String?) {
        guard state.withLock({ !$0.stopped && $0.syncRequests.ask(sourceName) }) else { return }
        spawn("ofs-sync") { [self] in
            while true {
                let round = state.withLock { $0.syncRequests.nextRound() }
                for name in round { syncNow(name) }
                if round.isEmpty { return poke() }
            }
        }
    }

    /// Syncs `sourceName` (nil: every subscribed source) on this thread, acting on what each
    /// sync found.
    private func syncNow(_ sourceName: String?) {
        let sources: [Source]
        if let sourceName {
            sources = (try? store.source(named: sourceName)).flatMap { $0.map { [$0] } } ?? []
        } else {
            sources = (try? store.sources().filter(\.subscribed)) ?? []
        }
        for source in sources {
            afterSync(syncer.sync(source))
            poke()
        }
    }

    /// Runs `body` on a thread of its own, tracked so `stop()` waits for it.
    func spawn(_ name: String, _ body: @escaping @Sendable () -> Void) {
        workers.enter()
        Thread { [workers] in
            csystem_name_this_thread(name)
            body()
            workers.leave()
        }.start()
    }
}
