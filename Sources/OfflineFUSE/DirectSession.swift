#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Synchronization

/// Serves a file system's operations without the kernel: each call builds a request, hands it
/// to the operation as the kernel's would come, and waits for the one `Answer` (from any
/// thread, as a kernel request's reply may come). What the file system does with requests is
/// then testable where `/dev/fuse` is missing (a container, a CI sandbox); what only the
/// kernel does (its caches, splice, passthrough, permissions) is not.
public final class DirectSession: Sendable {
    public let operations: any FileSystemOperations
    /// Who the requests say they come from (`fuse_req_ctx`).
    public let context: RequestContext
    /// How long a call waits for its answer before it gives `ETIMEDOUT`.
    public let deadline: Duration

    public init(operations: any FileSystemOperations, context: RequestContext = .currentProcess,
                deadline: Duration = .seconds(30)) {
        self.operations = operations
        self.context = context
        self.deadline = deadline
    }

    /// Runs `operation` with a fresh reply and returns its answer. `sizeLimit` is the
    /// request's size where it has one (read, readdir, getxattr, listxattr).
    public func call<Value>(sizeLimit: Int = 0, _ operation: (Reply<Value>) -> Void) -> Answer {
        let answered = DispatchSemaphore(value: 0)
        let answer = Mutex<Answer?>(nil)
        let request = Request(context: context) { value in
            answer.withLock { $0 = value }
            answered.signal()
        }
        operation(Reply(request, sizeLimit: sizeLimit))
        let seconds = Double(deadline.components.seconds) + Double(deadline.components.attoseconds) / 1e18
        guard answered.wait(timeout: .now() + seconds) == .success else { return .error(.timedOut) }
        return answer.withLock { $0 } ?? .error(.ioError)
    }
}

extension RequestContext {
    /// This process (as a request from its main thread would say).
    public static var currentProcess: RequestContext {
        RequestContext(uid: getuid(), gid: getgid(), pid: getpid(), umask: 0o022)
    }
}
