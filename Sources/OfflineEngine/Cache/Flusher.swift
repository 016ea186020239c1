import CSystemShim
import Foundation

/// Batches the "flush, then claim" step of every item file on a thread of its own:
/// `fdatasync` and the store commit block, and readers must never wait on them.
///
/// A file asks to be flushed when it first gets unflushed bytes (due after the flush
/// interval) and again, urgently, when enough bytes are unflushed. One commit then covers
/// everything written meanwhile, so throughput does not pay a commit per buffer.
final class Flusher: @unchecked Sendable {
    // @unchecked: `due` and `stopping` are protected by `condition` (the lock it waits on).
    private let condition = NSCondition()
    private var due: [ObjectIdentifier: (file: CachedFile, at: Date)] = [:]  // protected by condition
    private var stopping = false  // protected by condition
    /// The thread starts with the first flush, so creating an engine starts no thread (a
    /// daemonizing mount forks after creating it).
    private var started = false  // protected by condition
    private let exited = DispatchSemaphore(value: 0)
    private var flushedHandlers: [@Sendable () -> Void] = []  // protected by condition
    /// Files flushed under one store transaction (each holds its commit lock meanwhile).
    static let maxBatch = 64

    init() {}

    private func startThreadIfNeeded() {  // with condition held
        guard !started else { return }
        started = true
        Thread { [self] in
            csystem_name_this_thread("ofs-flusher")
            run()
        }.start()
    }

    /// Starts the thread now rather than with the first flush (which a reader's first bytes
    /// trigger). Only once forking is over.
    func start() {
        condition.lock()
        if !stopping { startThreadIfNeeded() }
        condition.unlock()
    }

    /// Calls `handler` (on the flusher's thread) after each round of flushes.
    func onFlushed(_ handler: @escaping @Sendable () -> Void) {
        condition.lock()
        flushedHandlers.append(handler)
        condition.unlock()
    }

    /// Flushes `file` after `delay` (zero: now), unless it is already due sooner.
    func schedule(_ file: CachedFile, after delay: Duration) {
        let seconds = Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18
        let at = Date(timeIntervalSinceNow: seconds)
        condition.lock()
        let key = ObjectIdentifier(file)
        if let current = due[key], current.at <= at {
            condition.unlock()
            return
        }
        due[key] = (file, at)
        startThreadIfNeeded()
        condition.unlock()
        // After unlocking: signalled under the lock, the flusher would wake only to wait for
        // it, and a reader's first bytes would wait on both switches.
        condition.signal()
    }

    /// Flushes what is due, then ends the thread.
    func stop() {
        condition.lock()
        let first = !stopping
        stopping = true
        let running = started
        condition.signal()
        condition.unlock()
        if first && running { exited.wait() }
    }

    private func run() {
        condition.lock()
        while true {
            let now = Date()
            let ready = due.filter { stopping || $0.value.at <= now }
            if ready.isEmpty {
                if stopping { break }
                if let next = due.values.map(\.at).min() {
                    _ = condition.wait(until: next)
                } else {
                    condition.wait()
                }
                continue
            }
            for key in ready.keys { due[key] = nil }
            let handlers = flushedHandlers
            condition.unlock()
            // One transaction per batch: many small files (HLS segments) cost one WAL sync.
            let files = ready.values.map(\.file)
            for start in stride(from: 0, to: files.count, by: Self.maxBatch) {
                _ = CachedFile.flush(Array(files[start..<min(files.count, start + Self.maxBatch)]))
            }
            for handler in handlers { handler() }
            condition.lock()
        }
        condition.unlock()
        exited.signal()
    }
}
