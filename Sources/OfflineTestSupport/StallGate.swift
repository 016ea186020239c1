import Foundation

/// Where connection threads wait for stalls, latency and trickle pacing, so that
/// `releaseStalls()` and `stop()` end those waits at once instead of after their full time.
final class StallGate: @unchecked Sendable {
    // @unchecked: both fields are protected by `condition`, which is the lock it waits on.
    private let condition = NSCondition()
    private var releases = 0  // protected by condition; bumped by releaseAll()
    private var stopped = false  // protected by condition

    /// Waits up to `seconds`. A `releasable` wait also ends at the next `releaseAll()`.
    /// Returns false when the origin is stopping (the caller drops the connection).
    func wait(seconds: Double, releasable: Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: max(0, seconds))
        condition.lock()
        defer { condition.unlock() }
        let generation = releases
        while !stopped, !(releasable && releases != generation) {
            if !condition.wait(until: deadline) { break }
        }
        return !stopped
    }

    /// Ends every releasable wait in progress (later stalls wait again).
    func releaseAll() {
        condition.lock()
        releases += 1
        condition.broadcast()
        condition.unlock()
    }

    /// Ends every wait, now and later.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }
}
