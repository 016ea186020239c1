import Logging
import OfflineEngine
import OfflineFUSE
import OfflineStore
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
        switch error.code {
        // An interrupted request is answered EINTR (DESIGN §5); a cancelled fetch only
        // happens for one.
        case .cancelled: return .interrupted
        // "Without network and without the bytes, a read fails with EIO within a bounded
        // time": every other failure is EIO to the reader; the engine records the detail.
        case .unavailable, .timedOut, .originError, .noSuchItem, .cacheWriteFailed: return .ioError
        }
    }

    /// Any other error on a request path.
    public func errno(for error: any Error, during operation: String) -> Errno {
        switch error {
        case let errno as Errno: return errno
        case let fetch as FetchError: return self.errno(for: fetch)
        case let store as StoreError where store.code == .unknownItem: return .noSuchFileOrDirectory
        default:
            let kind = "\(operation): \(type(of: error))"
            if logged.withLock({ $0.insert(kind).inserted }) {
                logger.error("\(operation) failed, answered EIO (further errors of this kind are not logged): \(error)")
            }
            return .ioError
        }
    }
}
