import ArgumentParser
import Foundation
import Logging
import OfflineEngine
import OfflineFUSE
import OfflineMount

struct MountCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mount",
        abstract: "Mount the library as files.",
        discussion: """
            Shows sources/, categories/, state/ and recent/ under the mount point. Without -f, \
            detaches once the mount is up and logs to syslog; with -f, stays in the foreground \
            and logs to stderr. Ends on 'offlinefs unmount', Ctrl-C or SIGTERM.

            Options (-o, comma-separated):
              read-timeout=30s   how long a read waits for missing bytes before EIO
              refresh=1s         how often the tree is checked against the library
              allow_other        let other users in (non-root: user_allow_other in /etc/fuse.conf)
              noauto_unmount     keep a dead mount after a crash (default: released)
              debug              log every FUSE request
            Always set: default_permissions, nosuid, nodev, fsname=offlinefs, subtype=offlinefs.
            Example: offlinefs mount ~/Media -o read-timeout=10s
            """)

    @OptionGroup var library: LibraryOptions
    @Argument(help: "An empty folder to mount on.") var mountpoint: String
    @Flag(name: .short, help: "Stay in the foreground, logging to stderr.") var foreground = false
    @Option(name: .short, help: ArgumentHelp("Mount options (see above).", valueName: "options")) var options: [String] = []

    func run() throws {
        let mountOptions: MountOptions
        do {
            mountOptions = try MountOptions.parse(options)
        } catch {
            throw ValidationError(error.description)
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: mountpoint, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw CLIError("mount point \(mountpoint) is not a folder")
        }
        let foreground = foreground
        let logger = Logger(label: "offlinefs") { label in
            var handler: any LogHandler = foreground ? StreamLogHandler.standardError(label: label) : SyslogLogHandler(label: label)
            handler.logLevel = mountOptions.debug ? .debug : .info
            return handler
        }

        let opened = try library.open()
        let byteSource = ByteSourceWiring.byteSource(for: opened)
        let fileSystem = OfflineFileSystem(library: opened, byteSource: byteSource,
                                           actions: StoreEvictor(store: opened.store, byteSource: byteSource),
                                           options: mountOptions, logger: logger)
        let session: FUSESession
        do {
            session = try FUSESession(mountpoint: mountpoint, options: mountOptions.fuseOptions, operations: fileSystem)
        } catch {
            throw CLIError("cannot mount on \(mountpoint): \(error) (is it empty and not already mounted?)")
        }
        if !foreground {
            // fork() with threads running can hang: nothing above may have started one.
            if let threads = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task"), threads.count > 1 {
                logger.warning("daemonizing with \(threads.count) threads running")
            }
            do {
                try FUSESession.daemonize()
            } catch {
                session.close()
                throw CLIError("cannot detach from the terminal: \(error)")
            }
        }
        do {
            try session.installSignalHandlers()
        } catch {
            logger.warning("no signal handlers (Ctrl-C will not unmount cleanly): \(error)")
        }
        fileSystem.start(notifier: session.notifier, refreshInterval: mountOptions.refreshInterval)
        logger.info("mounted \(opened.folder.path) on \(mountpoint)")
        defer {
            fileSystem.stop()
            session.close()
        }
        do {
            let end = try session.run()
            logger.info("unmounted \(mountpoint)\(end == .ended ? "" : " (signal)")")
        } catch {
            logger.error("the mount ended with an error: \(error)")
            throw ExitCode.failure
        }
    }
}
