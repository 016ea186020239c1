import ArgumentParser
import CSystemShim
import Foundation
import Logging
import OfflineEngine
import OfflineFUSE
import OfflineMount

/// Mounts a library and serves it until unmounted: shared by `mount` and `demo`.
struct MountRunner {
    /// Opens the library; in the daemon when the mount detaches (see `run`).
    let library: () throws -> Library
    let mountpoint: String
    let options: MountOptions
    let foreground: Bool

    /// Without `foreground`, detaches first: the library's database is opened in the daemon,
    /// never before the fork. SQLite's locks belong to the process that took them, so a
    /// database opened before the fork was unlocked in the daemon: the next `offlinefs
    /// status` took itself for the last reader, folded the WAL into the database and deleted
    /// it under the mount, and everything the mount wrote after was lost.
    func run() throws {
        try Self.checkUsable(mountpoint)
        // Absolute and resolved now, before the daemon changes directory to / (and before
        // mounting: a look at our own mount point from here could wait on ourselves).
        let mountpoint = MountTable.absolute(mountpoint)
        let visibleMountpoint = URL(fileURLWithPath: mountpoint).resolvingSymlinksInPath().path
        guard !foreground else {
            do {
                return try serve(mountpoint: mountpoint, visibleMountpoint: visibleMountpoint, readiness: nil)
            } catch let failure as UsageFailure {
                FileHandle.standardError.write(Data("Error: \(failure.message)\n".utf8))
                throw ExitCode.validationFailure
            }
        }
        let readiness: Detach.Readiness
        do {
            readiness = try Detach.detach()
        } catch {
            throw CLIError("cannot detach from the terminal: \(error)")
        }
        // In the daemon: what stops the mount before it serves goes to the foreground process.
        do {
            try serve(mountpoint: mountpoint, visibleMountpoint: visibleMountpoint, readiness: readiness)
        } catch let failure as UsageFailure {
            readiness.failed(failure.message, status: ExitCode.validationFailure.rawValue)
            throw ExitCode.validationFailure
        } catch let failure as CLIError {
            readiness.failed(failure.description)
            throw ExitCode.failure
        }
    }

    /// A mount refused for how it was asked (status 64), with our line under libfuse's.
    private struct UsageFailure: Error {
        var message: String
    }

    private func serve(mountpoint: String, visibleMountpoint: String, readiness: Detach.Readiness?) throws {
        let mountOptions = options
        let foreground = foreground
        let logger = Logger(label: "offlinefs") { label in
            var handler: any LogHandler = foreground ? StreamLogHandler.standardError(label: label) : SyslogLogHandler(label: label)
            handler.logLevel = mountOptions.debug ? .debug : .info
            return handler
        }
        let opened = try library()

        // Before the engine, which sizes its descriptor pool by it.
        let openFileLimit = OpenFileLimit.raiseToHard()

        // Takes the library lock.
        let engine: Engine
        do {
            var configuration = SchedulerConfiguration()
            configuration.playbackSpeed = mountOptions.playbackSpeed
            engine = try Engine(library: opened, configuration: configuration, logger: logger)
        } catch {
            throw CLIError("cannot mount \(opened.folder.path): \(ErrorMessages.translate(error))")
        }
        // Said once the library is ours: a mount that cannot start has other news.
        if let limit = openFileLimit {
            let raised = limit.now > limit.before ? " (raised from \(limit.before))" : ""
            logger.info("open-file limit \(limit.now)\(raised)")
        }
        let fileSystem = OfflineFileSystem(library: opened.view, fetcher: engine.transfers.fetcher,
                                           actions: EngineActions(commands: engine.commands),
                                           performer: engine.commands, options: mountOptions, hls: engine.transfers.hls,
                                           downloadSpeeds: { [scheduler = engine.scheduler] in scheduler.downloadSpeeds },
                                           logger: logger)
        let session: FUSESession
        do {
            session = try FUSESession(mountpoint: mountpoint, options: mountOptions.fuseOptions, operations: fileSystem)
        } catch .invalidOptions {
            // Like a malformed option of our own; libfuse's line above names it.
            throw UsageFailure(message: "cannot mount on \(mountpoint): libfuse refused an option given with -o")
        } catch .mountFailed {
            // libfuse or fusermount3 printed the system's reason on the line above.
            throw CLIError("cannot mount on \(mountpoint): the mount was refused (is /dev/fuse there and readable, "
                           + "fusermount3 installed, and the mount point not already mounted?)")
        } catch {
            throw CLIError("cannot mount on \(mountpoint): \(error)")
        }
        engine.lock.record(mountpoint: mountpoint)
        engine.hooks.setMountpoint(visibleMountpoint)
        fileSystem.enableDesktopThumbnails(mountpoint: visibleMountpoint)
        // libdispatch makes its event loop (an epoll, an eventfd, timerfds) at the first timer
        // and traps when it cannot: the first read's timer, run while the mount was out of
        // descriptors, ended the mount. Made now, while descriptors are free.
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
