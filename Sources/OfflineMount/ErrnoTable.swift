import Foundation
public import Logging
public import OfflineEngine
public import OfflineFUSE
import Synchronization

/// The one place engine and store errors become kernel answers (rclone's `translateError`):
/// anything unmapped is `EIO`, logged once per kind so a flood of reads cannot flood the log.
public final class ErrnoTable: Sendable {
    private let logger: Logger
    private let logged = Mutex<Set<String>>([])  // protected: kinds already logged (leaf lock)

    public init(logger: Logger) {
        self.logger = logger
    }

    /// A failed fetch of missing bytes.
    public func errno(for error: FetchError) -> Errno {
        if error.reason == .outOfDescriptors { logDescriptorShortage(error.message) }
        switch error.code {
        // An interrupted request is answered EINTR (DESIGN §5); a cancelled fetch only
        // happens for one.
        case .cancelled: return .interrupted
        // The library's disk is full: said as such ("No space left on device"), not EIO.
        case .cacheWriteFailed where error.reason == .noSpace: return .noSpace
        // "Without network and without the bytes, a read fails with EIO within a bounded
        // time": every other failure is EIO to the reader; the engine records the detail.
        case .unavailable, .timedOut, .originError, .noSuchItem, .cacheWriteFailed: return .ioError
        }
    }

    /// Any other error on a request path, logged once per operation and kind of error.
    public func errno(for error: any Error, during operation: String) -> Errno {
        switch error {
        case let errno as Errno: return errno
        case let fetch as FetchError: return self.errno(for: fetch)
        case _ where EngineError.meansNoSuchItem(error): return .noSuchFileOrDirectory
        case _ where EngineError.meansDiskFull(error): return .noSpace
        case let posix as POSIXError where posix.code == .EMFILE || posix.code == .ENFILE:
            logDescriptorShortage("\(operation): \(posix)")
            return .ioError
        default:
            let kind = "\(operation): \(type(of: error))"
            if logged.withLock({ $0.insert(kind).inserted }) {
                logger.error("\(operation) failed, answered EIO (further errors of this kind are not logged): \(error)")
            }
            return .ioError
        }
    }

    /// Running out of descriptors fails every read that needs a new one until some are free
    /// again (reads then recover by themselves): one line says so, with the limit, whatever
    /// file each failure was about.
    private func logDescriptorShortage(_ first: String) {
        guard logged.withLock({ $0.insert("out of descriptors").inserted }) else { return }
        var limit = rlimit()
        let soft = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 ? "\(limit.rlim_cur)" : "unknown"
        logger.error("the mount ran out of file descriptors (open-file limit \(soft)); reads that need one fail with EIO until some are free (further such failures are not logged): \(first)")
    }
}
