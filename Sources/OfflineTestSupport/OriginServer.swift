import Dispatch
import Foundation
import Glibc
import Synchronization

/// The sockets and threads behind a `TestOrigin`: one accept thread per listener and one
/// thread per connection (dedicated `Thread`s: the cooperative pool has only as many threads
/// as cores, and these block in accept/recv/send).
///
/// Threads never close a descriptor another thread may still use: `stop()` and `goOffline()`
/// only `shutdown` sockets to wake their threads, and each thread closes its own descriptor
/// (connections under the state lock, so `stop()` never shuts down a reused number).
final class OriginServer: Sendable {
    private struct State {
        var port: UInt16
        var listener: Int32?
        /// Signalled when the current accept thread has closed its listener.
        var acceptDone: DispatchSemaphore?
        var connections: [Int: Int32] = [:]
        /// Connections to end with RST (the origin went offline under them).
        var resetOnClose: Set<Int> = []
        var nextConnection = 0
        var offline = false
        var stopped = false
    }

    let registry: OriginRegistry
    let gate = StallGate()
    private let state: Mutex<State>  // protects State; never held across blocking calls
    private let threads = DispatchGroup()  // every accept and connection thread

    init(port: UInt16, registry: OriginRegistry) throws(TestOriginError) {
        // Process-wide, as the brief asks; sends also pass MSG_NOSIGNAL.
        signal(SIGPIPE, SIG_IGN)
        let listener = try Socket.listen(port: port)
        self.registry = registry
        self.state = Mutex(State(port: listener.port))
        startAccepting(on: listener.fd)
    }

    var port: UInt16 { state.withLock { $0.port } }

    var isOffline: Bool { state.withLock { $0.offline } }

    private func startAccepting(on listener: Int32) {
        let done = DispatchSemaphore(value: 0)
        let accepting = state.withLock { state -> Bool in
            guard !state.stopped else { return false }  // stop() raced with goOnline()
            state.listener = listener
            state.acceptDone = done
            return true
        }
        guard accepting else {
            Socket.close(listener)
            return
        }
        threads.enter()
        let thread = Thread { [self] in
            acceptLoop(listener)
            Socket.close(listener)
            done.signal()
            threads.leave()
        }
        thread.name = "TestOrigin accept"
        thread.start()
    }

    private func acceptLoop(_ listener: Int32) {
        while true {
            // accept4 is not visible from Glibc's module map; the race FD_CLOEXEC closes
            // (a fork between accept and fcntl) does not arise in tests.
            let client = accept(listener, nil, nil)
            if client < 0 {
                switch errno {
                case EINTR, ECONNABORTED, EPROTO: continue
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    // Out of descriptors: back off instead of spinning; a shutdown still ends us.
                    usleep(10_000)
                    continue
                default: return  // EINVAL after shutdown(): stop() or goOffline()
                }
            }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            let id: Int? = state.withLock { state in
                guard !state.stopped, !state.offline else { return nil }
                state.nextConnection += 1
                state.connections[state.nextConnection] = client
                return state.nextConnection
            }
            guard let id else {
                Socket.setResetOnClose(client)
                Socket.close(client)
                continue
            }
            startConnection(client, id: id)
        }
    }

    private func startConnection(_ fd: Int32, id: Int) {
        threads.enter()
        let thread = Thread { [self] in
            Socket.setNoDelay(fd)
            let ending = OriginConnection(fd: fd, id: id, registry: registry, gate: gate).run()
            state.withLock { state in
                state.connections[id] = nil
                if ending == .reset || state.resetOnClose.remove(id) != nil { Socket.setResetOnClose(fd) }
                Socket.close(fd)
            }
            threads.leave()
        }
        thread.name = "TestOrigin connection \(id)"
        thread.start()
    }

    /// Closes the listener and every connection, ends stalls, and waits (up to 10 s) for all
    /// threads to finish. Idempotent.
    func stop() {
        let first = state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            state.stopped = true
            if let listener = state.listener { Socket.shutdown(listener) }
            state.listener = nil
            for fd in state.connections.values { Socket.shutdown(fd) }
            return true
        }
        guard first else { return }
        gate.stop()
        _ = threads.wait(timeout: .now() + 10)
    }

    /// Closes the listener (new connections are refused) and resets open connections.
    func goOffline() {
        let done = state.withLock { state -> DispatchSemaphore? in
            guard !state.stopped, !state.offline else { return nil }
            state.offline = true
            if let listener = state.listener { Socket.shutdown(listener) }
            state.listener = nil
            for (id, fd) in state.connections {
                state.resetOnClose.insert(id)
                Socket.shutdown(fd)
            }
            return state.acceptDone
        }
        // The port can be bound again only once the accept thread has closed the listener.
        done?.wait()
    }

    /// Listens again on the same port.
    func goOnline() throws(TestOriginError) {
        let port = state.withLock { state -> UInt16? in
            state.stopped || !state.offline ? nil : state.port
        }
        guard let port else { return }
        let listener = try Socket.listen(port: port)
        state.withLock { $0.offline = false }
        startAccepting(on: listener.fd)
    }
}
