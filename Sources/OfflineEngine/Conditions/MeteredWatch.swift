import CSystemShim
import Dispatch
import Foundation
import OfflineDBus
import Synchronization

/// Whether NetworkManager calls the connection metered, as it says on the system bus:
/// one connection, followed on a thread of its own (`offlinefs.dbus`, never Swift's pool);
/// every change calls `onChange` (the scheduler's poke). No bus, no NetworkManager, or no
/// answer means not metered. A bus that is missing or goes away is tried again with back-off.
final class MeteredWatch: Sendable {
    struct Settings: Sendable {
        /// nil: the system bus as `sd_bus_open_system(3)` finds it (`$DBUS_SYSTEM_BUS_ADDRESS`,
        /// else `/run/dbus/system_bus_socket`).
        var busAddress: String?
        var reconnect: Backoff
        /// How long `start()` waits for the first answer.
        var firstAnswerWait: TimeInterval
    }

    private struct State {
        var metered = false
        var answered = false
        var started = false
        var stopped = false
    }
    private let state = Mutex(State())  // a leaf: onChange runs after it is released
    private let settings: Settings
    private let onChange: @Sendable () -> Void
    /// nil when no eventfd could be made: then there is no thread, and never metered.
    private let wakeup: BusWakeup?
    private let firstAnswer = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    init(settings: Settings, onChange: @escaping @Sendable () -> Void) {
        self.settings = settings
        self.onChange = onChange
        wakeup = try? BusWakeup()
    }

    var isMetered: Bool { state.withLock { $0.metered } }

    private var isStopped: Bool { state.withLock { $0.stopped } }

    /// Starts following, and waits (at most `firstAnswerWait`) for the first answer, so that
    /// the scheduler's first tick does not start a download that a metered connection holds back.
    func start() {
        guard let wakeup, state.withLock({ s in
            defer { s.started = true }
            return !s.started && !s.stopped
        }) else { return }
        Thread { [self] in
            csystem_name_this_thread("ofs-dbus")
            follow(wakeup)
            finished.signal()
        }.start()
        _ = firstAnswer.wait(timeout: .now() + settings.firstAnswerWait)
    }

    /// Stops following and waits for the thread (it is woken at once, never waits on the bus).
    func stop() {
        let running = state.withLock { s -> Bool in
            defer { s.stopped = true }
            return s.started && !s.stopped
        }
        guard running, let wakeup else { return }
        wakeup.signal()
        finished.wait()
    }

    /// The thread: connect, follow until the connection is lost, wait, again.
    private func follow(_ wakeup: BusWakeup) {
        var failures = 0
        while !isStopped {
            do {
                let connection = try settings.busAddress.map(BusConnection.connect(address:)) ?? BusConnection.system()
                let manager = try NetworkManagerMetered(connection) { [self] metered in
                    failures = 0  // the bus answers: a later loss starts the back-off afresh
                    report(metered)
                }
                while !isStopped {
                    while try connection.process() {}
                    try connection.wait(wakeup: wakeup)
                }
                withExtendedLifetime(manager) {}
                return
            } catch {
                // No bus, or it went away: not metered until it answers again.
            }
            report(false)
            failures += 1
            let delay = settings.reconnect.delay(attempt: failures, random: Double.random(in: 0..<1))
            wakeup.wait(timeout: .seconds(delay))
        }
    }

    private func report(_ metered: Bool) {
        let (first, changed) = state.withLock { s -> (Bool, Bool) in
            defer {
                s.metered = metered
                s.answered = true
            }
            return (!s.answered, s.metered != metered)
        }
        if first { firstAnswer.signal() }
        if changed { onChange() }
    }
}
