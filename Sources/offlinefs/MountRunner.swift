import ArgumentParser
import CSystemShim
import Foundation
import Logging
import OfflineEngine
import OfflineFUSE
import OfflineMount

/// Mounts a library and serves it until unmounted: shared by `mount` and `demo`.
struct MountRunner {
    let library: Library
    let mountpoint: String
    let options: MountOptions
    let foreground: Bool


    func run() throws {
        let mountOptions = options
        let opened = library
        try Self.checkUsable(mountpoint)
        let foreground = foreground
        let logger = Logger(label: "offlinefs") { label in
            var handler: any LogHandler = foreground ? StreamLogHandler.standardError(label: label) : SyslogLogHandler(label: label)
            handler.logLevel = mountOptions.debug ? .debug : .info
            return handler
        }

        // The path file managers and hooks see: absolute, links resolved (before mounting: a
        // look at our own mount point from here could wait on ourselves).
        let visibleMountpoint = URL(fileURLWithPath: mountpoint).resolvingSymlinksInPath().path

        // Before the engine, which sizes its descriptor pool by it.
        let openFileLimit = OpenFileLimit.raiseToHard()

        // Takes the library lock; creates no thread yet: the scheduler starts below, after the
        // daemonizing fork, and the transfer thread with the first fetch.
        let engine: Engine
        do {
            engine = try Engine(library: opened)
        } catch {
            throw CLIError("cannot mount \(opened.folder.path): \(error)")
        }
        // Said once the library is ours: a mount that cannot start has other news.
        if let limit = openFileLimit {
            let raised = limit.now > limit.before ? " (raised from \(limit.before))" : ""
            logger.info("open-file limit \(limit.now)\(raised)")
        }
        let fileSystem = OfflineFileSystem(library: opened.view, fetcher: engine.transfers.fetcher,
                                           actions: EngineActions(commands: engine.commands),
                                           performer: engine.commands, options: mountOptions, hls: engine.transfers.hls,
                                           logger: logger)
        let session: FUSESession
        do {
            session = try FUSESession(mountpoint: mountpoint, options: mountOptions.fuseOptions, operations: fileSystem)
        } catch .invalidOptions {
            // A usage error (64), like a malformed option of our own; libfuse's line above names it.
            FileHandle.standardError.write(Data("Error: cannot mount on \(mountpoint): libfuse refused an option given with -o\n".utf8))
            throw ExitCode.validationFailure
        } catch {
            throw CLIError("cannot mount on \(mountpoint): \(error) (is /dev/fuse there, and fusermount3 installed?)")
        }
        var readiness: Detach.Readiness?
        if !foreground {
            // fork() with threads running can hang: nothing above may have started one.
            if let threads = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task"), threads.count > 1 {
                logger.warning("daemonizing with \(threads.count) threads running")
            }
            do {
                readiness = try Detach.detach()
            } catch {
                session.close()
                throw CLIError("cannot detach from the terminal: \(error)")
            }
        }
        engine.lock.record(mountpoint: mountpoint)
        engine.hooks.setMountpoint(visibleMountpoint)
        fileSystem.enableDesktopThumbnails(mountpoint: visibleMountpoint)
        // libdispatch makes its event loop (an epoll, an eventfd, timerfds) at the first timer
        // and traps when it cannot: the first read's timer, run while the mount was out of
        // descriptors, ended the mount. Made now, while descriptors are free (after the fork).
        DispatchQueue.global().asyncAfter(deadline: .now()) {}
        do {
            try session.installSignalHandlers()
        } catch {
            logger.warning("no signal handlers (Ctrl-C will not unmount cleanly): \(error)")
        }
        // The session serves from here on; the library is checked and its tree built on a
        // thread of its own meanwhile. Requests wait for the tree (`MountTree.snapshot`) except
        // the root's attributes, so the mount point answers `stat` as soon as it is mounted.
        let startup = MountStartup(library: opened, fileSystem: fileSystem, engine: engine, session: session,
                                   options: mountOptions, readiness: readiness, logger: logger, mountpoint: mountpoint)
        startup.begin()
        // Sequential readers of the page cache get requests of `max_read` instead of 128 KiB
        // (a fraction of the per-request cost). Waits for INIT, so on a thread of its own
        // that nothing waits for; without root it fails and the kernel's default stays.
        let readAhead = mountOptions.maxRead / 1024
        Thread {
            csystem_name_this_thread("ofs-read-ahead")
            if let error = session.setReadAhead(kilobytes: readAhead) {
                logger.debug("kernel read-ahead of \(mountpoint) left at its default: \(error)")
            }
        }.start()
        defer {
            startup.waitUntilDone()
            fileSystem.stop()
            session.close()
            engine.stop()
        }
        let end: FUSESession.LoopEnd
        do {
            end = try session.run()
        } catch {
            logger.error("the mount ended with an error: \(error)")
            throw ExitCode.failure
        }
        if let failure = startup.failure {
            throw CLIError(failure)
        }
        logger.info("unmounted \(mountpoint)\(end == .ended ? "" : " (signal)")")
    }

    /// Refuses a mount point that is missing, not a folder, already mounted (a second mount
    /// would hide the first) or not empty (the mount would hide its files). The mount table
    /// is read first: listing a dead mount would fail or hang.
    static func checkUsable(_ mountpoint: String) throws {
        let path = MountTable.absolute(mountpoint)
        if MountTable.isMounted(path) {
            throw CLIError("\(path) is already mounted (offlinefs unmount \(path) first, or pick another folder)")
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw CLIError("mount point \(path) does not exist (create it: mkdir -p \(path))")
        }
        guard isDirectory.boolValue else {
            throw CLIError("mount point \(path) is not a folder (mount on an empty folder)")
        }
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        guard entries.isEmpty else {
            throw CLIError("mount point \(path) is not empty (mount on an empty folder, so the mount hides no files)")
        }
    }
}
