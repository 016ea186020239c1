import CSystemShim
#if canImport(Glibc)
import Glibc
#endif
import CFuseShim
import Synchronization

/// A `struct fuse_session *` that may cross threads.
struct SessionHandle: @unchecked Sendable {
    let raw: OpaquePointer
}

/// A POSIX semaphore that may cross threads (it is made for that).
struct Semaphore: @unchecked Sendable {
    let raw: UnsafeMutablePointer<sem_t>
}

/// Sends kernel cache notifications from a thread of its own.
///
/// A notification sent from inside a request handler can deadlock (the kernel may hold a lock
/// the notification needs until that request is answered: `fuse_lowlevel.h`), so callers only
/// queue here; one dedicated thread sends, in order. Safe to call from any thread, including
/// request handlers. Notifications queued after the session closed are dropped.
public final class Notifier: Sendable {
    /// One queued notification.
    public enum Notification: Hashable, Sendable {
        /// Drop cached data of `inode` in `offset..<offset+length` (length 0: to the end;
        /// offset negative: attributes only) and its cached attributes.
        case invalidateInode(inode: UInt64, offset: Int64, length: Int64)
        /// Drop the cached name `name` in `parent` (the next access looks it up again).
        case invalidateEntry(parent: UInt64, name: FileName)
        /// `name` in `parent`, which was `child`, is gone (also closes the name's watches).
        case delete(parent: UInt64, child: UInt64, name: FileName)
    }

    private struct State {
        var queue: [Notification] = []
        var running = true
        var sent = 0
    }
    /// Nil for a file system served without the kernel: nothing to tell, notifications drop.
    private let session: SessionHandle?
    private let state = Mutex(State())  // protected: the queue and the counters
    private let wakeupSemaphore: Semaphore  // posted once per queued item and on stop
    private let thread = Mutex<pthread_t?>(nil)
    /// Called on the notifier thread with each notification and libfuse's result (0, or a
    /// negative errno such as `-ENOENT` when the kernel had nothing cached).
    private let resultHandler: (@Sendable (Notification, Int32) -> Void)?

    init(session: SessionHandle?, resultHandler: (@Sendable (Notification, Int32) -> Void)?) {
        self.session = session
        self.resultHandler = resultHandler
        wakeupSemaphore = Semaphore(raw: .allocate(capacity: 1))
        sem_init(wakeupSemaphore.raw, 0, 0)
        if session == nil { state.withLock { $0.running = false } }
    }

    /// A notifier for a file system served without the kernel (`DirectSession`): no kernel
    /// caches to invalidate, so it drops what it is given.
    public static func withoutKernel() -> Notifier {
        Notifier(session: nil, resultHandler: nil)
    }

    deinit {
        sem_destroy(wakeupSemaphore.raw)
        wakeupSemaphore.raw.deallocate()
    }

    /// Queues an invalidation of `inode`'s cached data and attributes.
    public func invalidateInode(_ inode: UInt64, offset: Int64 = 0, length: Int64 = 0) {
        enqueue(.invalidateInode(inode: inode, offset: offset, length: length))
    }

    /// Drops `inode`'s cached attributes now, on the caller's thread. Unlike the queued
    /// notifications this one waits on nothing a request holds (no cached data goes, and the
    /// file systems here keep no dirty pages), so a request handler may send it before its
    /// reply, which then cannot overtake it.
    public func invalidateAttributesNow(_ inode: UInt64) {
        guard let session, state.withLock({ $0.running }) else { return }
        _ = fuse_lowlevel_notify_inval_inode(session.raw, inode, -1, 0)
    }

    /// Queues an invalidation of the cached name `name` in `parent`.
    public func invalidateEntry(parent: UInt64, name: FileName) {
        enqueue(.invalidateEntry(parent: parent, name: name))
    }

    /// Queues the news that `name` (inode `child`) in `parent` was deleted.
    public func delete(parent: UInt64, child: UInt64, name: FileName) {
        enqueue(.delete(parent: parent, child: child, name: name))
    }

    /// Queues `notification`; dropped once the session has closed.
    public func enqueue(_ notification: Notification) {
        let queued = state.withLock { state -> Bool in
            guard state.running else { return false }
            state.queue.append(notification)
            return true
        }
        if queued { sem_post(wakeupSemaphore.raw) }
    }

    /// The number of notifications handed to the kernel so far (whatever their result).
    public var sentCount: Int { state.withLock { $0.sent } }

    func start() {
        let box = Unmanaged.passRetained(self).toOpaque()
        var id = pthread_t()
        let rc = pthread_create(&id, nil, { argument in
            csystem_name_this_thread("ofs-notifier")
            let notifier = Unmanaged<Notifier>.fromOpaque(argument!).takeRetainedValue()
            notifier.runLoop()
            return nil
        }, box)
        if rc == 0 {
            thread.withLock { $0 = id }
        } else {
            Unmanaged<Notifier>.fromOpaque(box).release()
            state.withLock { $0.running = false }
        }
    }

    /// Sends what is queued, then ends the thread. Called before the session is destroyed.
    func stop() {
        state.withLock { $0.running = false }
        sem_post(wakeupSemaphore.raw)
        if let id = thread.withLock({ state -> pthread_t? in defer { state = nil }; return state }) {
            pthread_join(id, nil)
        }
    }

    private func runLoop() {
        while true {
            while sem_wait(wakeupSemaphore.raw) != 0 && errno == EINTR {}
            let (batch, running) = state.withLock { state -> ([Notification], Bool) in
                defer { state.queue.removeAll() }
                return (state.queue, state.running)
            }
            for notification in batch {
                let result = send(notification)
                state.withLock { $0.sent += 1 }
                resultHandler?(notification, result)
            }
            if !running { return }
        }
    }

    private func send(_ notification: Notification) -> Int32 {
        guard let session else { return -ENOTCONN }
        switch notification {
        case .invalidateInode(let inode, let offset, let length):
            return fuse_lowlevel_notify_inval_inode(session.raw, inode, off_t(offset), off_t(length))
        case .invalidateEntry(let parent, let name):
            return withCName(name) { fuse_lowlevel_notify_inval_entry(session.raw, parent, $0, $1) }
        case .delete(let parent, let child, let name):
            return withCName(name) { fuse_lowlevel_notify_delete(session.raw, parent, child, $0, $1) }
        }
    }

    private func withCName(_ name: FileName, _ body: (UnsafePointer<CChar>, Int) -> Int32) -> Int32 {
        (name.bytes + [0]).withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { body($0.baseAddress!, name.bytes.count) }
        }
    }
}
