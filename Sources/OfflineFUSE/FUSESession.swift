import Dispatch
#if canImport(Glibc)
import Glibc
#endif
import CFuseShim
import Synchronization

/// Why a session could not start or run.
public enum FUSESessionError: Error, Hashable, Sendable {
    /// `fuse_session_new` refused the options (libfuse printed why on stderr).
    case invalidOptions([String])
    /// `fuse_session_mount` failed (no `/dev/fuse`, no permission, mountpoint busy …).
    case mountFailed(mountpoint: String)
    /// `fuse_set_signal_handlers` failed (another session in this process holds them).
    case signalHandlersFailed
    /// `fuse_daemonize` failed.
    case daemonizeFailed
    /// The request loop ended with an error.
    case loopFailed(Errno)
}

extension FUSESessionError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .invalidOptions(let options): "libfuse refused the options \(options.joined(separator: ","))"
        case .mountFailed(let mountpoint): "the mount on \(mountpoint) was refused"
        case .signalHandlersFailed: "libfuse's signal handlers could not be installed"
        case .daemonizeFailed: "could not go to the background"
        case .loopFailed(let errno): "the request loop failed: \(errno)"
        }
    }
}

/// A mounted FUSE filesystem served by `FileSystemOperations` over libfuse3's low-level API.
///
/// Lifecycle: `init` creates the session and mounts; `run` serves requests on libfuse's
/// worker threads until the filesystem is unmounted (`fusermount3 -u`), a handled signal
/// arrives, or `exit()` is called; `close()` (or deinit) unmounts and destroys the session.
///
/// ```swift
/// let session = try FUSESession(mountpoint: "/mnt/media",
///                               options: ["default_permissions", "nosuid", "nodev", "fsname=offlinefs"],
///                               operations: fs)
/// try session.installSignalHandlers()   // SIGINT/SIGTERM/SIGHUP end `run`
/// try session.run()
/// session.close()
/// ```
public final class FUSESession: Sendable {
    /// How the request loop ended.
    public enum LoopEnd: Hashable, Sendable {
        /// Unmounted or `exit()` called.
        case ended
        /// A signal caught by `installSignalHandlers()` (its number).
        case signal(Int32)
    }

    private struct State {
        var mounted = true
        var closed = false
        var signalHandlers = false
        var exitRequested = false
        var notifierStarted = false
    }

    public let mountpoint: String
    /// Sends kernel cache notifications from its own thread (started by `run`; notifications
    /// queued earlier wait for it); usable from request handlers.
    public let notifier: Notifier
    /// Backing files for passthrough opens (`KernelFeatures.passthrough`), usable once INIT
    /// granted it.
    public let backingFiles: BackingFiles
    private let session: SessionHandle
    private let context: SessionContext
    private let state = Mutex(State())  // protected: mount and teardown steps, each done once

    /// Creates the session and mounts it at `mountpoint`.
    ///
    /// - Parameters:
    ///   - options: mount and libfuse options as for `-o`, e.g. `["default_permissions",
    ///     "nosuid", "nodev", "fsname=offlinefs", "subtype=offlinefs", "max_read=131072"]`;
    ///     an element may hold several comma-separated options. `debug` logs every request.
    ///   - notificationResult: called on the notifier thread with each notification's result.
    public init(mountpoint: String, options: [String], operations: any FileSystemOperations,
                programName: String = "offlinefs",
                notificationResult: (@Sendable (Notifier.Notification, Int32) -> Void)? = nil) throws(FUSESessionError) {
        self.mountpoint = mountpoint
        let backingFiles = try BackingFiles()
        self.backingFiles = backingFiles
        let context = SessionContext(operations: operations, maxRead: Self.maxRead(in: options), backingFiles: backingFiles)
        self.context = context

        var arguments = [programName]
        let joined = options.filter { !$0.isEmpty }.joined(separator: ",")
        if !joined.isEmpty { arguments += ["-o", joined] }
        var ops = OperationTable.make()
        let raw = Self.withArguments(arguments) { args in
            fuse_session_new(args, &ops, MemoryLayout<fuse_lowlevel_ops>.size,
                             Unmanaged.passUnretained(context).toOpaque())
        }
        guard let raw else { throw .invalidOptions(options) }
        session = SessionHandle(raw: raw)
        notifier = Notifier(session: session, resultHandler: notificationResult)
        guard fuse_session_mount(raw, mountpoint) == 0 else {
            state.withLock { $0.mounted = false }
            fuse_session_destroy(raw)
            state.withLock { $0.closed = true }
            throw .mountFailed(mountpoint: mountpoint)
        }
        // Without it the session still works, with libfuse's features only.
        _ = backingFiles.install(on: raw)
    }

    deinit { close() }

    /// Serves requests on the calling thread (and libfuse's workers) until the session ends.
    ///
    /// - Parameters:
    ///   - cloneFD: one `/dev/fuse` descriptor per worker thread (less contention).
    ///   - maxIdleThreads: idle workers kept; more are started under load and ended after.
    ///   - maxThreads: the most workers at once.
    @discardableResult
    public func run(cloneFD: Bool = false, maxIdleThreads: Int = 10, maxThreads: Int = 64) throws(FUSESessionError) -> LoopEnd {
        // The notifier thread starts here, not at mount, so `daemonize()` can fork in between.
        if state.withLock({ state in defer { state.notifierStarted = true }; return !state.notifierStarted }) {
            notifier.start()
        }
        guard let config = fuse_loop_cfg_create() else { throw .loopFailed(.noMemory) }
        defer { fuse_loop_cfg_destroy(config) }
        fuse_loop_cfg_set_clone_fd(config, cloneFD ? 1 : 0)
        fuse_loop_cfg_set_idle_threads(config, UInt32(clamping: maxIdleThreads))
        fuse_loop_cfg_set_max_threads(config, UInt32(clamping: maxThreads))
        let result = fuse_session_loop_mt(session.raw, config)
        if result > 0 { return .signal(result) }
        // After `exit()` the workers may see the closed descriptor: that is the end asked for.
        if result < 0 && !state.withLock({ $0.exitRequested }) { throw .loopFailed(Errno(-result)) }
        return .ended
    }

    /// Ends `run` from any thread: marks the session exited and unmounts, which wakes the
    /// workers blocked on `/dev/fuse`. The unmount is lazy: while files on the mount stay open,
    /// the kernel keeps the connection (and `run`) alive until they are closed.
    public func exit() {
        let unmount = state.withLock { state -> Bool in
            state.exitRequested = true
            defer { state.mounted = false }
            return state.mounted && !state.closed
        }
        fuse_session_exit(session.raw)
        if unmount { fuse_session_unmount(session.raw) }
    }

    /// Unmounts (if still mounted) and destroys the session; `destroy` runs on the filesystem.
    /// Call after `run` returned. Idempotent.
    public func close() {
        let (unmount, removeSignals, proceed) = state.withLock { state -> (Bool, Bool, Bool) in
            guard !state.closed else { return (false, false, false) }
            defer {
                state.closed = true
                state.mounted = false
                state.signalHandlers = false
            }
            return (state.mounted, state.signalHandlers, true)
        }
        guard proceed else { return }
        notifier.stop()
        if removeSignals { fuse_remove_signal_handlers(session.raw) }
        if unmount { fuse_session_unmount(session.raw) }
        fuse_session_destroy(session.raw)
    }

    /// SIGINT, SIGTERM and SIGHUP end `run` (which then returns `.signal`); SIGPIPE is ignored.
    /// One session per process can hold them.
    public func installSignalHandlers() throws(FUSESessionError) {
        guard fuse_set_signal_handlers(session.raw) == 0 else { throw .signalHandlersFailed }
        state.withLock { $0.signalHandlers = true }
    }

    /// Detaches from the terminal (`fuse_daemonize`): fork, new session, `chdir("/")`,
    /// stdio to `/dev/null`. Call after the session is created (mounted, so mount errors still
    /// reach the terminal) and before any thread starts, since `fork` with threads running can
    /// hang: before `run` (which starts the notifier and worker threads), and before Dispatch,
    /// Swift concurrency or libcurl start theirs.
    public static func daemonize() throws(FUSESessionError) {
        guard fuse_daemonize(0) == 0 else { throw .daemonizeFailed }
    }

    /// Queues an invalidation of `inode`'s cached data (`offset`, `length`; 0 length: to the
    /// end) and attributes. Sent from the notifier thread.
    public func notifyInvalidateInode(_ inode: UInt64, offset: Int64 = 0, length: Int64 = 0) {
        notifier.invalidateInode(inode, offset: offset, length: length)
    }

    /// Queues an invalidation of the cached name `name` in `parent`.
    public func notifyInvalidateEntry(parent: UInt64, name: FileName) {
        notifier.invalidateEntry(parent: parent, name: name)
    }

    /// Queues the news that `name` (inode `child`) in `parent` is gone.
    public func notifyDelete(parent: UInt64, child: UInt64, name: FileName) {
        notifier.delete(parent: parent, child: child, name: name)
    }

    /// The value of the last `max_read=N` among `options` (each may be comma-separated).
    /// Sets the kernel's read-ahead for this mount (`/sys/class/bdi/<major>:<minor>/read_ahead_kb`).
    ///
    /// The kernel reads ahead 128 KiB at most on a FUSE mount unless told otherwise, so a
    /// sequential reader costs one request per 128 KiB; `conn->max_readahead` can only lower
    /// that, and INIT sets it, so this waits for the first request after INIT (call it from a
    /// thread of its own that nothing waits for). The device number comes from the mount
    /// table: a `stat` of our own mount point from inside the daemon could wait forever on a
    /// request nobody serves once the loop has ended, and a killed daemon would then never
    /// exit and release the connection. Needs root (sysfs); a normal user keeps the default.
    /// - Returns: nil, or the errno of the failed look-up or write.
    @discardableResult
    public func setReadAhead(kilobytes: Int) -> Errno? {
        context.servingAfterInit.wait()
        guard let (major, minor) = MountTable.device(of: mountpoint) else { return .noSuchFileOrDirectory }
        let path = "/sys/class/bdi/\(major):\(minor)/read_ahead_kb"
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return Errno(errno) }
        defer { Glibc.close(fd) }
        let text = Array("\(kilobytes)\n".utf8)
        guard write(fd, text, text.count) == text.count else { return Errno(errno) }
        return nil
    }

    static func maxRead(in options: [String]) -> UInt32? {
        var result: UInt32?
        for option in options.flatMap({ $0.split(separator: ",") }) where option.hasPrefix("max_read=") {
            result = UInt32(option.dropFirst("max_read=".count))
        }
        return result
    }

    /// Runs `body` with a `fuse_args` over C copies of `arguments`, freed afterwards.
    private static func withArguments<R>(_ arguments: [String], _ body: (UnsafeMutablePointer<fuse_args>) -> R) -> R {
        let copies = arguments.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        var argv = copies + [nil]
        return argv.withUnsafeMutableBufferPointer { argv in
            var args = fuse_args(argc: Int32(arguments.count), argv: argv.baseAddress, allocated: 0)
            defer { fuse_opt_free_args(&args) }
            return body(&args)
        }
    }
}
