import Dispatch
public import Foundation
import Synchronization

/// The engine's one source of time: "now" for expiries, windows and calendar days, and the
/// timers every wait (retries, back-off, windows, expiry, sync interval) is scheduled on.
/// Tests inject `ManualClock` and move time in milliseconds instead of waiting seconds.
public protocol EngineClock: Sendable {
    func now() -> Date
    /// Runs `action` once `date` has come, on a thread of the clock's (never under a caller's
    /// lock). Cancelling the returned timer before then stops it.
    @discardableResult
    func schedule(at date: Date, _ action: @escaping @Sendable () -> Void) -> any ClockTimer
}

public protocol ClockTimer: Sendable {
    func cancel()
}

/// Wall-clock time; timers on a private serial queue.
public struct SystemClock: EngineClock {
    private static let queue = DispatchQueue(label: "offlinefs.clock")

    public init() {}

    public func now() -> Date { Date() }

    @discardableResult
    public func schedule(at date: Date, _ action: @escaping @Sendable () -> Void) -> any ClockTimer {
        let timer = SystemTimer()
        // Wall deadline: a machine that sleeps through a window start still fires on waking.
        Self.queue.asyncAfter(wallDeadline: .now() + max(0, date.timeIntervalSinceNow)) {
            if !timer.cancelled.withLock({ $0 }) { action() }
        }
        return timer
    }

    private final class SystemTimer: ClockTimer {
        let cancelled = Mutex(false)
        func cancel() { cancelled.withLock { $0 = true } }
    }
}

/// A clock that moves only when told: `advance(by:)` fires every timer that came due, in
/// order, on the caller's thread.
public final class ManualClock: EngineClock {
    private struct State {
        var now: Date
        var timers: [Int: (date: Date, action: @Sendable () -> Void)] = [:]
        var nextID = 0
    }
    private let state: Mutex<State>  // a leaf: actions run after it is released

    public init(now: Date = Date(timeIntervalSince1970: 1_750_000_000)) {
        state = Mutex(State(now: now))
    }

    public func now() -> Date { state.withLock { $0.now } }

    @discardableResult
    public func schedule(at date: Date, _ action: @escaping @Sendable () -> Void) -> any ClockTimer {
        let id = state.withLock { s -> Int? in
            guard date > s.now else { return nil }
            s.nextID += 1
            s.timers[s.nextID] = (date, action)
            return s.nextID
        }
        guard let id else {
            action()
            return ManualTimer(clock: self, id: -1)
        }
        return ManualTimer(clock: self, id: id)
    }

    /// Moves time forward, firing due timers (earliest first) with `now` at their date.
    public func advance(by seconds: TimeInterval) {
        let target = state.withLock { $0.now.addingTimeInterval(seconds) }
        set(to: target)
    }

    /// Moves time to `date` (never backwards), firing due timers.
    public func set(to date: Date) {
        while true {
            let next = state.withLock { s -> (@Sendable () -> Void)? in
                guard let (id, timer) = s.timers.filter({ $0.value.date <= date }).min(by: { $0.value.date < $1.value.date })
                else {
                    s.now = max(s.now, date)
                    return nil
                }
                s.timers[id] = nil
                s.now = max(s.now, timer.date)
                return timer.action
            }
            guard let next else { return }
            next()
        }
    }

    /// Timers not yet fired (tests check that a wait is scheduled).
    public var pendingTimers: Int { state.withLock { $0.timers.count } }

    fileprivate func cancel(_ id: Int) {
        _ = state.withLock { $0.timers.removeValue(forKey: id) }
    }

    private struct ManualTimer: ClockTimer {
        let clock: ManualClock
        let id: Int
        func cancel() { clock.cancel(id) }
    }
}
