#if canImport(Glibc)
import Glibc
#endif
import CFuseShim
import Synchronization

/// A `fuse_req_t` that may cross threads: libfuse allows a reply from any thread, once.
struct RequestHandle: @unchecked Sendable {
    let raw: fuse_req_t
}

/// Who sent a request (`fuse_req_ctx`); for a page-cache writeback these are not the writer's.
public struct RequestContext: Hashable, Sendable {
    public var uid: UInt32
    public var gid: UInt32
    public var pid: Int32
    public var umask: UInt32

    public init(uid: UInt32, gid: UInt32, pid: Int32, umask: UInt32) {
        self.uid = uid
        self.gid = gid
        self.pid = pid
        self.umask = umask
    }
}

/// One kernel request in flight: who sent it, whether it was interrupted, and the single
/// reply it is owed. Every operation's `Reply` holds one.
///
/// Interrupts (FUSE_INTERRUPT: a signal reached the process blocked in the request) are
/// delivered to the handler given to `onInterrupt(_:)`, on a libfuse thread; the usual answer is
/// `reply.fail(.interrupted)` at once, whatever the request was waiting for.
///
/// Lock order: `state` → libfuse's req lock → libfuse's session lock. libfuse calls the
/// interrupt trampoline holding its req lock, so the trampoline takes only `interruptHandler`
/// (a leaf lock), never `state`.
public final class Request: Sendable {
    /// The kernel's request; nil for one served without the kernel (`DirectSession`), whose
    /// answer goes to `direct`.
    let handle: RequestHandle?
    private let direct: (@Sendable (Answer) -> Void)?
    /// Who sent the request.
    public let context: RequestContext

    private struct State {
        var replied = false
        var interruptRegistered = false
    }
    private let state = Mutex(State())  // protected: the reply-once flag and the registration
    private let interruptHandler = Mutex<(@Sendable () -> Void)?>(nil)  // leaf lock
    private let interrupted = Atomic<Bool>(false)
    private let handlerRan = Atomic<Bool>(false)  // the handler runs at most once
    /// The thread running the interrupt trampoline (0: none). A reply sent from inside it must
    /// not unregister (libfuse holds the req lock there; unregistering takes it again).
    private let trampolineThread = Atomic<UInt>(0)
    /// The thread registering the interrupt function: libfuse calls the function at once, on
    /// this thread, when the request is already interrupted; the handler then runs after
    /// registration returns instead, outside libfuse's lock.
    private let registeringThread = Atomic<UInt>(0)

    init(_ raw: fuse_req_t) {
        handle = RequestHandle(raw: raw)
        direct = nil
        let ctx = fuse_req_ctx(raw).pointee
        context = RequestContext(uid: ctx.uid, gid: ctx.gid, pid: ctx.pid, umask: ctx.umask)
    }

    /// A request served without the kernel: its answer goes to `answer`, once. Never
    /// interrupted.
    init(context: RequestContext, answer: @escaping @Sendable (Answer) -> Void) {
        handle = nil
        direct = answer
        self.context = context
    }

    /// `true` once the kernel has interrupted this request (or before the reply was sent).
    public var isInterrupted: Bool {
        if interrupted.load(ordering: .acquiring) { return true }
        // The req is valid only until the reply; `state` keeps the check and the reply apart.
        return state.withLock { state in
            guard !state.replied, let handle else { return false }
            return fuse_req_interrupted(handle.raw) != 0
        }
    }

    /// Whether the kernel sent it (else a `DirectSession` did).
    var isKernel: Bool { handle != nil }

    /// `true` once a reply has been sent.
    public var isAnswered: Bool { state.withLock { $0.replied } }

    /// Runs `handler` when the kernel interrupts this request (at once if it already has).
    ///
    /// Register before handing the reply to another thread, i.e. from inside the operation:
    /// libfuse's registration and a reply racing on two threads would touch a freed request.
    /// The handler runs on a libfuse thread and should only answer (`reply.fail(.interrupted)`)
    /// or signal the waiting work; it must not block. Registering again replaces the handler.
    public func onInterrupt(_ handler: @escaping @Sendable () -> Void) {
        interruptHandler.withLock { $0 = handler }
        let runNow = state.withLock { state -> Bool in
            guard !state.replied, let handle else { return false }
            if !state.interruptRegistered {
                state.interruptRegistered = true
                // Retained until the reply: libfuse holds the pointer as the handler's data.
                let data = Unmanaged.passRetained(self).toOpaque()
                registeringThread.store(UInt(pthread_self()), ordering: .releasing)
                fuse_req_interrupt_func(handle.raw, interruptTrampoline, data)
                registeringThread.store(0, ordering: .releasing)
            }
            return interrupted.load(ordering: .acquiring)
        }
        if runNow { runHandlerOnce() }
    }

    private func runHandlerOnce() {
        guard !handlerRan.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let handler = interruptHandler.withLock { $0 }
        handler?()
    }

    fileprivate func deliverInterrupt() {
        interrupted.store(true, ordering: .releasing)
        if registeringThread.load(ordering: .acquiring) == UInt(pthread_self()) { return }
        trampolineThread.store(UInt(pthread_self()), ordering: .releasing)
        runHandlerOnce()
        trampolineThread.store(0, ordering: .releasing)
    }

    /// Sends the one reply: runs `send` with the req (or, served without the kernel, hands
    /// over `answer`) unless a reply was already sent. Returns `false` (and sends nothing)
    /// for a second reply.
    @discardableResult
    func finish(_ answer: @autoclosure () -> Answer, _ send: (fuse_req_t) -> Int32) -> Bool {
        let (first, registered) = state.withLock { state -> (Bool, Bool) in
            guard !state.replied else { return (false, false) }
            state.replied = true
            return (true, state.interruptRegistered)
        }
        guard first else { return false }
        guard let handle else {
            direct?(answer())
            interruptHandler.withLock { $0 = nil }
            return true
        }
        if registered && trampolineThread.load(ordering: .acquiring) != UInt(pthread_self()) {
            // Waits for a running interrupt handler (libfuse's req lock) and stops later ones,
            // so the retained pointer below is never used after its release.
            fuse_req_interrupt_func(handle.raw, nil, nil)
        }
        // A failed send (e.g. -ENOENT: the kernel gave up on the request) needs no action.
        _ = send(handle.raw)
        interruptHandler.withLock { $0 = nil }  // breaks handler → reply → request cycles
        if registered { Unmanaged.passUnretained(self).release() }
        return true
    }
}

/// libfuse's interrupt callback: finds the `Request` from the registered pointer.
private let interruptTrampoline: @convention(c) (fuse_req_t?, UnsafeMutableRawPointer?) -> Void = { _, data in
    guard let data else { return }
    // The handler may send the reply, which drops the registration's retain: keep the
    // request alive until the trampoline is done with it.
    let request = Unmanaged<Request>.fromOpaque(data).takeUnretainedValue()
    withExtendedLifetime(request) { request.deliverInterrupt() }
}
