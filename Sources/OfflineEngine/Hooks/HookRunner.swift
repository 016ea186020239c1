import CSystemShim
public import Foundation
public import Logging
public import OfflineStore
import Synchronization

/// Runs the `hook` policy's command on events (docs/hooks.md): it follows the event log, so
/// what any process records (a CLI sync, the mount's engine) runs it, and nothing the engine
/// does waits for it. The `error` events it sees go to the process's log too (journald for a
/// mount), at most `errorsLoggedPerMinute` a minute: an administrator reads the log, not
/// `.events`.
///
/// One run at a time, on a thread of its own, through `/bin/sh -c`, with what the event is
/// about in the environment; a run still going after `timeout` is ended (SIGTERM to its
/// process group, then SIGKILL). At most `maxPending` runs wait; past that the oldest are
/// dropped, with an `error` event saying how many.
public final class HookRunner: Sendable {
    public struct Settings: Sendable {
        /// How long one run may take.
        public var timeout: TimeInterval = 60
        /// How often the event log is read for new lines.
        public var pollInterval: TimeInterval = 1
        public var maxPending = 100
        public var errorsLoggedPerMinute = 10
        public init() {}
    }

    private let store: LibraryStore
    private let settings: Settings
    private let logger: Logger
    private struct State {
        var stopped = false
        /// Stopping after the runs of every event recorded so far (`stop(finishing:)`).
        var finishing = false
        var started = false
        /// The mount point, once mounted: item paths are also given absolute.
        var mountpoint: String?
    }
    private let state = Mutex(State())  // leaf lock
    private let wake = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)

    public init(store: LibraryStore, settings: Settings = Settings(), logger: Logger = Logger(label: "offlinefs.hooks")) {
        self.store = store
        self.settings = settings
        self.logger = logger
    }

    /// Items' absolute paths are `<mountpoint>/<path>` from now on.
    public func setMountpoint(_ path: String?) {
        state.withLock { $0.mountpoint = path }
    }

    /// Starts following the log from its current end (earlier lines run nothing).
    public func start() {
        let first = state.withLock { s -> Bool in
            defer { s.started = true }
            return !s.started && !s.stopped
        }
        guard first else { return }
        let from = (try? store.lastEventSeq()) ?? 0
        Thread { [self] in
            csystem_name_this_thread("ofs-hooks")
            follow(from: from)
            done.signal()
        }.start()
    }

    /// Stops after the run in progress, if any (bounded by `timeout`); with `finishing`,
    /// after the runs of every event recorded until now (a process about to end that
    /// recorded them: `offlinefs download --wait`).
    public func stop(finishing: Bool = false) {
        let wasRunning = state.withLock { s -> Bool in
            defer { s.stopped = true; s.finishing = finishing }
            return s.started && !s.stopped
        }
        guard wasRunning else { return }
        wake.signal()
        done.wait()
    }

    /// Stopped, and not finishing what was recorded.
    private var mustEnd: Bool { state.withLock { $0.stopped && !$0.finishing } }

    private func follow(from start: Int64) {
        var last = start
        var mapping = HookEvents()
        var pending: [HookRun] = []
        var errorsLogged = (minute: Date.distantPast, count: 0, skipped: 0)
        while !mustEnd {
            // Read after the stop when finishing: this pass sees every line recorded before it.
            let finishing = state.withLock { $0.stopped }
            let events = (try? store.events(after: last, limit: 1000)) ?? []
            if let newest = events.last?.seq { last = newest }
            for event in events where event.kind == .error { log(event, &errorsLogged) }
            if let hook = (try? store.policies())?.hook {
                pending += mapping.runs(for: events)
                if pending.count > settings.maxPending {
                    let dropped = pending.count - settings.maxPending
                    pending.removeFirst(dropped)
                    _ = try? store.appendEvent(kind: .error, message: "hook: \(dropped) runs dropped (more than \(settings.maxPending) waiting)")
                }
                while !pending.isEmpty, !mustEnd {
                    run(hook, pending.removeFirst())
                }
            } else {
                _ = mapping.runs(for: events)  // keeps what a sync discovered in step
                pending.removeAll()
            }
            guard events.count < 1000 else { continue }
            if finishing { return }
            _ = wake.wait(timeout: .now() + settings.pollInterval)
        }
    }

    /// Logs an `error` event, or counts it once this minute's lines are spent (the count is
    /// logged with the next minute's first).
    private func log(_ event: StoreEvent, _ logged: inout (minute: Date, count: Int, skipped: Int)) {
        if event.time.timeIntervalSince(logged.minute) >= 60 {
            if logged.skipped > 0 { logger.warning("\(logged.skipped) more error events not logged (offlinefs status, .events)") }
            logged = (event.time, 0, 0)
        }
        guard logged.count < settings.errorsLoggedPerMinute else { return logged.skipped += 1 }
        logged.count += 1
        logger.warning("\(event.message)")
    }

    /// The environment of a run.
    func environment(_ run: HookRun) -> [String: String] {
        var env = ["OFFLINEFS_EVENT": run.event.rawValue, "OFFLINEFS_LIBRARY": store.folder.path]
        let mountpoint = state.withLock { $0.mountpoint }
        if let mountpoint { env["OFFLINEFS_MOUNT"] = mountpoint }
        if let sourceID = run.sourceID, let source = (try? store.source(id: sourceID)) ?? nil {
            env["OFFLINEFS_SOURCE"] = source.name
        }
        if let itemID = run.itemID, let item = (try? store.item(id: itemID)) ?? nil {
            env["OFFLINEFS_ITEM_ID"] = String(item.id)
            env["OFFLINEFS_CONTENT_ID"] = item.contentID
            env["OFFLINEFS_TITLE"] = item.title
            env["OFFLINEFS_STATE"] = run.state ?? item.state.rawValue
            if let error = item.error { env["OFFLINEFS_ERROR"] = error.rawValue }
            if let source = env["OFFLINEFS_SOURCE"], let file = item.fileName {
                env["OFFLINEFS_PATH"] = "sources/\(source)/\(file)"
                if let mountpoint { env["OFFLINEFS_FILE"] = mountpoint + "/sources/\(source)/\(file)" }
            }
            if let licence = (try? store.licence(itemID: itemID)) ?? nil {
                env["OFFLINEFS_LICENCE_EXPIRES"] = LicenceClock.expiryText(licence)
            }
        }
        if run.event == .sync { env["OFFLINEFS_NEW_ITEMS"] = String(run.newItemCount) }
        return env
    }

    private func run(_ command: String, _ run: HookRun) {
        var env = environment(run)
        var listing: String?
        if run.event == .sync {
            let path = NSTemporaryDirectory() + "offlinefs-new-items-\(UUID().uuidString).txt"
            if FileManager.default.createFile(atPath: path, contents: Data(run.newItems.map { $0 + "\n" }.joined().utf8),
                                              attributes: [.posixPermissions: 0o600]) {
                env["OFFLINEFS_NEW_ITEMS_FILE"] = path
            }
            listing = path
        }
        defer { if let listing { unlink(listing) } }
        let outcome = Self.spawnAndWait(command, environment: env, timeout: settings.timeout) { [self] in mustEnd }
        switch outcome {
        case .exited(0): break
        case .exited(let status):
            // In `.events` (and from there the log): a script or a daemon's user sees it.
            _ = try? store.appendEvent(kind: .error, itemID: run.itemID, sourceID: run.sourceID,
                                       message: "hook for \(run.event.rawValue) exited with status \(status)")
        case .timedOut:
            _ = try? store.appendEvent(kind: .error, itemID: run.itemID, sourceID: run.sourceID,
                                       message: "hook for \(run.event.rawValue) still running after \(Int(settings.timeout)) s: ended")
        case .failedToStart(let errno):
            _ = try? store.appendEvent(kind: .error, message: "hook could not start: \(String(cString: strerror(errno)))")
        }
    }

    enum Outcome: Equatable {
        case exited(Int32)
        case timedOut
        case failedToStart(Int32)
    }

    /// `/bin/sh -c command` in a process group of its own, standard input from /dev/null,
    /// no descriptor of ours but standard output and error; ended after `timeout`, or at once
    /// when `stopping` says so (the engine is stopping).
    static func spawnAndWait(_ command: String, environment: [String: String], timeout: TimeInterval,
                             stopping: () -> Bool = { false }) -> Outcome {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        // libcurl's sockets and the cache's descriptors are not the hook's business.
        _ = csystem_spawn_close_from(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setpgroup(&attributes, 0)
        _ = csystem_spawn_default_signals(&attributes, Int16(POSIX_SPAWN_SETPGROUP))

        var merged = ProcessInfo.processInfo.environment
        for (key, value) in environment { merged[key] = value }
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sh"), strdup("-c"), strdup(command), nil]
        defer {
            envp.forEach { free($0) }
            argv.forEach { free($0) }
        }
        var pid = pid_t()
        let rc = posix_spawn(&pid, "/bin/sh", &actions, &attributes, argv, envp)
        guard rc == 0 else { return .failedToStart(rc) }

        let deadline = Date().addingTimeInterval(timeout)
        var killedAt: Date?
        while true {
            var status: Int32 = 0
            let waited = waitpid(pid, &status, WNOHANG)
            if waited == pid {
                if killedAt != nil { return .timedOut }
                let exited = status & 0x7f == 0
                return .exited(exited ? (status >> 8) & 0xff : 128 + (status & 0x7f))
            }
            if waited < 0 && errno != EINTR { return .exited(-1) }
            let now = Date()
            if killedAt == nil, now >= deadline || stopping() {
                kill(-pid, SIGTERM)
                killedAt = now
            } else if let killedAt, now.timeIntervalSince(killedAt) >= 2 {
                kill(-pid, SIGKILL)
            }
            usleep(5_000)
        }
    }
}
