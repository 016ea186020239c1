import CSystemShim
import Foundation
import Logging
import OfflineEngine
import OfflineFUSE
import OfflineMount
import OfflineStore
import Synchronization

/// What a mount does once the kernel connection is up, on a thread of its own while the
/// session already answers: the library's integrity check and the tree, side by side, then
/// the engine. Requests wait for the tree unless the store answers them exactly as it will
/// (`OfflineFileSystem.earlyEntry`), so nobody sees a half-loaded library; they do not wait
/// for the check, the engine does: nothing writes to an unchecked library (docs/decisions.md).
///
/// A failed check ends the mount: the session exits (unmounting), the detached daemon's
/// foreground process prints the reason, and `run` throws it.
final class MountStartup: Sendable {
    private let library: Library
    private let fileSystem: OfflineFileSystem
    private let engine: Engine
    private let session: FUSESession
    private let options: MountOptions
    private let readiness: Detach.Readiness?
    private let logger: Logger
    private let mountpoint: String
    private let done = DispatchSemaphore(value: 0)
    private let failureMessage = Mutex<String?>(nil)

    init(library: Library, fileSystem: OfflineFileSystem, engine: Engine, session: FUSESession,
         options: MountOptions, readiness: Detach.Readiness?, logger: Logger, mountpoint: String) {
        self.library = library
        self.fileSystem = fileSystem
        self.engine = engine
        self.session = session
        self.options = options
        self.readiness = readiness
        self.logger = logger
        self.mountpoint = mountpoint
    }

    /// Why the mount gave up while starting, if it did.
    var failure: String? { failureMessage.withLock { $0 } }

    func begin() {
        Thread { [self] in
            csystem_name_this_thread("ofs-startup")
            defer { done.signal() }
            run()
        }.start()
    }

    /// Waits for the start-up thread (the session may end while it still loads the tree).
    func waitUntilDone() {
        done.wait()
        done.signal()
    }

    private func run() {
        // The check reads the file on the writer connection while the tree is built from a
        // reader: nothing writes (no engine) before the check passed.
        let started = fileSystem.start(notifier: session.notifier, backingFiles: session.backingFiles,
                                       refreshInterval: options.refreshInterval) {
            do {
                try library.store.checkIntegrity()
                return true
            } catch {
                let message = "cannot mount \(library.folder.path): \(ErrorMessages.translate(error))"
                logger.error("\(message)")
                failureMessage.withLock { $0 = message }
                return false
            }
        }
        guard started else {
            readiness?.failed(failure ?? "cannot mount \(library.folder.path)")
            fileSystem.stop()  // requests waiting for the tree go on, and end with the session
            session.exit()
            return
        }
        engine.start()
        readiness?.ready()
        logger.info("mounted \(library.folder.path) on \(mountpoint)")
    }
}
