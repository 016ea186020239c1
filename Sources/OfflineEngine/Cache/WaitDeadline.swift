import Dispatch
import Synchronization

/// A wait's deadline: a timer that ends the wait, cancelled as soon as the wait is answered.
/// Most waits end in milliseconds; a timer left to run out the read bound would keep its
/// memory that long, a few thousand of them on a mount reading hundreds of files a second.
final class WaitDeadline: Sendable {
    private struct State: @unchecked Sendable {  // the source is only touched under the lock
        var source: (any DispatchSourceTimer)?
        var ended = false
    }
    private let state = Mutex(State())

    /// Calls `expire` on `queue` after `interval`, unless `end` came first.
    func start(after interval: DispatchTimeInterval, on queue: DispatchQueue, expire: @escaping @Sendable () -> Void) {
        let source = DispatchSource.makeTimerSource(queue: queue)
        source.schedule(deadline: .now() + interval)
        source.setEventHandler(handler: expire)
        source.resume()
        let kept = state.withLock { s -> Bool in
            guard !s.ended else { return false }
            s.source = source
            return true
        }
        if !kept { source.cancel() }
    }

    /// The wait is over: the timer goes now.
    func end() {
        let source = state.withLock { s -> (any DispatchSourceTimer)? in
            s.ended = true
            defer { s.source = nil }
            return s.source
        }
        source?.cancel()
    }
}
