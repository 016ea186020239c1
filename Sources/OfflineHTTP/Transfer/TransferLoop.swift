import CSystemShim
import Dispatch
import Foundation
import Synchronization

/// Many streaming HTTP transfers on one libcurl multi handle, driven by a thread of its own
/// (never Swift's cooperative pool: `curl_multi_poll` blocks). Connections are reused
/// (keep-alive) and HTTP/2 is multiplexed where the origin offers it.
///
/// While a transfer someone waits for receives, those nobody waits for are held
/// (`TransferHandle.isWaitedFor`, `holdBack`); a slow one ends instead, for its consumer to
/// ask again (`Configuration.endHeldBelow`).
///
/// `start` and `cancel` may be called from any thread, including from inside a callback;
/// they queue a command and wake the loop with `curl_multi_wakeup`. Callbacks run on the
/// loop thread (see `TransferCallbacks`).
///
/// Lock order: `commands` is the only lock; callbacks never run while it is held.
public final class TransferLoop: Sendable {
    public struct Configuration: Sendable {
        /// Connections to one host at once (HTTP/1.1 needs one per parallel transfer).
        public var maxHostConnections: Int
        /// Connections kept open for reuse.
        public var maxConnectionCache: Int
        public var userAgent: String
        /// A transfer nobody waits for that is to be held while it has received slower than
        /// this (bytes a second, while not held) ends with `heldBack` instead. A held
        /// connection goes on taking what its receive window allows, which on a slow link is
        /// seconds of it (docs/transfers.md); a new one starts with a small window. 0: held
        /// transfers never end.
        public var endHeldBelow: Int64

        public init(maxHostConnections: Int = 16, maxConnectionCache: Int = 32,
                    userAgent: String = "offlinefs/\(OfflineVersion.string)", endHeldBelow: Int64 = 3_000_000) {
            self.maxHostConnections = maxHostConnections
            self.maxConnectionCache = maxConnectionCache
            self.userAgent = userAgent
            self.endHeldBelow = endHeldBelow
        }
    }

    private struct Start: Sendable {
        var handle: TransferHandle
        var request: HTTPRequest
        var callbacks: TransferCallbacks
    }

    private struct Commands: Sendable {
        var starts: [Start] = []
        var cancels: [UInt64] = []
        var resumes: [UInt64] = []
        var stopping = false
        var stopped = false
        /// The loop thread starts on the first transfer, so a process can create the loop,
        /// then fork (a daemonizing mount), then use it: fork() with threads running hangs.
        var threadStarted = false
        /// Why the loop thread could not set libcurl up; every transfer fails with it.
        var setupFailure: HTTPError?
    }

    /// The multi handle, made by the loop thread when it starts: making it initializes
    /// libcurl (and OpenSSL with it), which a mount does after it is up, not before. Only
    /// `wakeup` is called from other threads (thread-safe in libcurl); before the handle
    /// exists there is nothing to wake, since the loop reads its commands first.
    private final class Context: @unchecked Sendable {
        private let lock = NSLock()  // leaf lock, guards `handle`
        private var handle: CurlMulti?
        func set(_ multi: CurlMulti) { lock.withLock { handle = multi } }
        func wakeup() { lock.withLock { handle }?.wakeup() }
    }

    /// State of one running transfer, touched only on the loop thread.
    private final class Active {
        let handle: TransferHandle
        let transfer: CurlTransfer
        let callbacks: TransferCallbacks
        /// Bytes taken from libcurl that the consumer left when it paused; handed over first
        /// when it resumes.
        private var kept: [UInt8] = []
        /// The consumer paused the transfer: it gets no bytes until `resume`.
        private(set) var paused = false
        /// libcurl was told to stop receiving (a write callback answered pause, or `applyPause`).
        private var curlPaused = false
        /// libcurl finished while the consumer was paused with bytes kept: how it ended waits
        /// for them to be handed over.
        var endedWhilePaused: Ending?

        struct Ending {
            let error: HTTPError?
        }
        /// The consumer refused a piece: the transfer must stop.
        private(set) var refused = false
        /// The loop holds it back while a transfer someone waits for receives (`holdBack`).
        private(set) var held = false
        /// Since when it has not been held, and for how long it was before: its rate counts
        /// only the time it could receive.
        private var unheldSince = ContinuousClock.now
        private var unheldBefore = Duration.zero

        init(handle: TransferHandle, transfer: CurlTransfer, callbacks: TransferCallbacks) {
            self.handle = handle
            self.transfer = transfer
            self.callbacks = callbacks
        }

        /// Whether it received slower than `rate` bytes a second while not held, and enough
        /// that its connection's window has grown (a new one's is ~64 KiB: ending that gains
        /// nothing).
        func isSlowerThan(_ rate: Int64) -> Bool {
            let received = handle.bytesReceived
            guard rate > 0, received >= 256 << 10, !paused, !held else { return false }
            let (seconds, attoseconds) = (unheldBefore + (ContinuousClock.now - unheldSince)).components
            return Double(received) < Double(rate) * (Double(seconds) + Double(attoseconds) * 1e-18)
        }

        var keepsBytes: Bool { !kept.isEmpty }

        /// libcurl's body callback. Each piece (libcurl hands over at most 16 KiB at a time) goes
        /// straight to the consumer. Why not gathered: a reader may be waiting for a transfer's
        /// first bytes, and gathered into 64 KiB they would wait for the next `recv`; the
        /// engine copies arriving bytes into memory blocks anyway, so gathering would only add
        /// a copy (docs/reads.md has the measurements).
        func receive(_ bytes: UnsafeRawBufferPointer) -> CurlTransfer.BodyAction {
            if paused || held {
                curlPaused = true  // libcurl holds these bytes and pauses
                return .pause
            }
            handle.add(bytes.count)
            return hand(bytes) ? .accept : .abort
        }

        /// Hands `bytes` to the consumer and keeps what it leaves when it pauses; false when
        /// it refused them.
        private func hand(_ bytes: UnsafeRawBufferPointer) -> Bool {
            switch callbacks.body(bytes) {
            case .more:
                return true
            case .stop:
                refused = true
                return false
            case .pause(let taken):
                paused = true
                kept = Array(UnsafeRawBufferPointer(rebasing: bytes[min(max(0, taken), bytes.count)...]))
                return true
            }
        }

        /// Receiving, or about to: neither paused nor held nor over.
        var isReceiving: Bool { !paused && !held && endedWhilePaused == nil }

        func hold(_ value: Bool) {
            if value && !held {
                handle.noteHeld()
                unheldBefore += ContinuousClock.now - unheldSince
            } else if !value && held {
                unheldSince = .now
            }
            held = value
        }

        /// After a turn: tells libcurl of a pause the consumer asked for outside its callback,
        /// and of a hold that began or ended.
        func applyPause() {
            if held || (paused && endedWhilePaused == nil) {
                guard !curlPaused else { return }
                curlPaused = true
                transfer.easy.pauseReceiving(true)
            } else if curlPaused && !paused {
                curlPaused = false
                transfer.easy.pauseReceiving(false)
            }
        }

        /// The consumer wants bytes again: the kept ones first, then libcurl's (which may
        /// arrive before this returns). False when it refused them.
        func resume() -> Bool {
            guard paused, !refused else { return !refused }
            paused = false
            if !kept.isEmpty {
                let bytes = kept
                kept = []
                guard bytes.withUnsafeBytes({ hand($0) }) else { return false }
                if paused { return true }  // paused again at once
            }
            if curlPaused && !held {
                curlPaused = false
                transfer.easy.pauseReceiving(false)
            }
            return !refused
        }
    }

    private let configuration: Configuration
    private let context = Context()
    private let commands = Mutex(Commands())
    private let nextID = Atomic<UInt64>(1)
    private let exited = DispatchSemaphore(value: 0)

    /// Touches no libcurl state: the loop thread sets libcurl up when it starts.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    private func launchThread() {
        Thread { [self] in
            csystem_name_this_thread("ofs-transfers")
            run()
        }.start()
    }

    /// Starts the loop thread now rather than with the first transfer, so that the first
    /// transfer does not pay for it. Only once forking is over (see
    /// `Commands.threadStarted`).
    public func startThread() {
        let needsThread = commands.withLock { commands in
            defer { commands.threadStarted = true }
            return !commands.threadStarted && !commands.stopping
        }
        if needsThread { launchThread() }
    }

    /// Starts `request`; the callbacks run on the loop thread. Never blocks.
    @discardableResult
    public func start(_ request: HTTPRequest, _ callbacks: TransferCallbacks) -> TransferHandle {
        start(request, callbacks, as: makeHandle())
    }

    /// A handle for a transfer to start later (`start(_:_:as:)`): a consumer that keeps it
    /// before the start has it in its callbacks, which may run before `start` returns.
    public func makeHandle() -> TransferHandle {
        TransferHandle(id: nextID.add(1, ordering: .relaxed).oldValue)
    }

    /// Starts `request` as `handle` (from `makeHandle`, used once). Never blocks.
    @discardableResult
    public func start(_ request: HTTPRequest, _ callbacks: TransferCallbacks, as handle: TransferHandle) -> TransferHandle {
        let (accepted, needsThread, failure) = commands.withLock { commands -> (Bool, Bool, HTTPError?) in
            if let failure = commands.setupFailure { return (false, false, failure) }
            guard !commands.stopping else { return (false, false, nil) }
            commands.starts.append(Start(handle: handle, request: request, callbacks: callbacks))
            defer { commands.threadStarted = true }
            return (true, !commands.threadStarted, nil)
        }
        if needsThread { launchThread() }
        if accepted {
            context.wakeup()
        } else {
            callbacks.complete(failure ?? HTTPError(.cancelled, "\(request.url): the transfer loop has stopped"))
        }
        return handle
    }

    /// Stops a transfer; its `complete` runs with `.cancelled` unless it already ran.
    public func cancel(_ handle: TransferHandle) {
        commands.withLock { $0.cancels.append(handle.id) }
        context.wakeup()
    }

    /// Lets a transfer whose consumer paused it (`BodyReply.pause`) go on: the bytes the loop
    /// kept are handed over first. Nothing happens if it is not paused.
    public func resume(_ handle: TransferHandle) {
        commands.withLock { $0.resumes.append(handle.id) }
        context.wakeup()
    }

    /// Cancels every transfer, waits for the loop thread to end. Idempotent.
    public func shutdown() {
        let (first, running) = commands.withLock { commands in
            defer { commands.stopping = true }
            return (!commands.stopping, commands.threadStarted)
        }
        guard first, running else { return }
        context.wakeup()
        exited.wait()
    }

    // MARK: - The loop thread

    private func run() {
        let multi: CurlMulti
        do throws(HTTPError) {
            multi = try CurlMulti()
        } catch {
            failEveryTransfer(error)
            return
        }
        multi.setMaxHostConnections(configuration.maxHostConnections)
        multi.setMaxConnectionCache(configuration.maxConnectionCache)
        context.set(multi)
        var active: [UnsafeMutableRawPointer: Active] = [:]
        var byID: [UInt64: UnsafeMutableRawPointer] = [:]

        func finish(_ easy: UnsafeMutableRawPointer, _ error: HTTPError?) {
            guard let entry = active.removeValue(forKey: easy) else { return }
            byID[entry.handle.id] = nil
            multi.remove(entry.transfer.easy)
            entry.callbacks.complete(error)
        }
        func endHeld(_ entries: [Active]) {
            for entry in entries {
                entry.handle.noteHeld()
                finish(entry.transfer.easy.handle, HTTPError(.heldBack, "\(entry.transfer.request.url): ended to give a reader the link"))
            }
        }

        while true {
            let batch = commands.withLock { commands in
                defer { commands.starts = []; commands.cancels = []; commands.resumes = [] }
                return commands
            }
            for start in batch.starts {
                do {
                    let entry = try makeTransfer(start)
                    active[entry.transfer.easy.handle] = entry
                    byID[start.handle.id] = entry.transfer.easy.handle
                    multi.add(entry.transfer.easy)
                } catch {
                    start.callbacks.complete(error)
                }
            }
            for id in batch.cancels {
                guard let easy = byID[id], let entry = active[easy] else { continue }
                finish(easy, HTTPError(.cancelled, "\(entry.transfer.request.url): cancelled"))
            }
            for id in batch.resumes {
                guard let easy = byID[id], let entry = active[easy] else { continue }
                let accepted = entry.resume()
                if !accepted {
                    finish(easy, Self.refusal(entry))
                } else if let ending = entry.endedWhilePaused, !entry.paused {
                    finish(easy, ending.error)
                }
            }
            endHeld(holdBack(active.values))
            if batch.stopping {
                for easy in Array(active.keys) {
                    finish(easy, HTTPError(.cancelled, "the transfer loop is shutting down"))
                }
                break
            }
            _ = multi.perform()
            while let done = multi.nextDone() {
                guard let entry = active[done.easy] else { continue }
                if !entry.refused && entry.keepsBytes {
                    // The consumer paused before taking the last bytes: the end waits for them.
                    entry.endedWhilePaused = Active.Ending(error: entry.transfer.finish(done.result))
                    continue
                }
                let error = entry.transfer.finish(done.result)
                finish(done.easy, error ?? (entry.refused ? Self.refusal(entry) : nil))
            }
            endHeld(holdBack(active.values))
            for entry in active.values { entry.applyPause() }
            // Returns at once on socket activity, a curl timer or a wakeup from start/cancel.
            multi.poll(milliseconds: active.isEmpty ? 10_000 : 1000)
        }
        exited.signal()
    }

    /// While a transfer someone waits for is receiving, the others are held (their bytes wait
    /// in the connection): a reader gets the whole link, a download what readers leave.
    /// Returns the ones to end instead, slow ones about to be held (`Configuration.endHeldBelow`).
    private func holdBack(_ entries: Dictionary<UnsafeMutableRawPointer, Active>.Values) -> [Active] {
        let readerReceives = entries.contains { $0.handle.isWaitedFor && $0.isReceiving }
        var ending: [Active] = []
        for entry in entries {
            let hold = readerReceives && !entry.handle.isWaitedFor
            if hold && !entry.held && entry.isSlowerThan(configuration.endHeldBelow) {
                ending.append(entry)
            } else {
                entry.hold(hold)
            }
        }
        return ending
    }

    /// Without a multi handle (libcurl could not be set up) no transfer can run: each one,
    /// queued or yet to come, completes with `error`.
    private func failEveryTransfer(_ error: HTTPError) {
        commands.withLock { $0.setupFailure = error }
        let queued = commands.withLock { commands in
            defer { commands.starts = [] }
            return commands.starts
        }
        for start in queued { start.callbacks.complete(error) }
        exited.signal()
    }

    private static func refusal(_ entry: Active) -> HTTPError {
        HTTPError(.cancelled, "\(entry.transfer.request.url): transfer stopped by its consumer")
    }

    private func makeTransfer(_ start: Start) throws(HTTPError) -> Active {
        let transfer = try CurlTransfer(start.request, userAgent: configuration.userAgent)
        let handle = start.handle
        let callbacks = start.callbacks
        transfer.onHead = { status, headers in
            handle.setExpected(headers["content-length"].flatMap { Int64($0) })
            return callbacks.head(status, headers)
        }
        let entry = Active(handle: handle, transfer: transfer, callbacks: callbacks)
        // Unowned: the entry owns the transfer, which owns this closure.
        transfer.onBody = { [unowned entry] bytes in entry.receive(bytes) }
        return entry
    }
}
