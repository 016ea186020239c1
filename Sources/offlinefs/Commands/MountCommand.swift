import ArgumentParser
import Foundation
import Logging
import OfflineEngine
import OfflineFUSE
import OfflineMount
import OfflineStore

struct MountCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mount",
        abstract: "Mount the library as files.",
        discussion: """
            Shows sources/, categories/, state/, recent/ and unwatched/ under the mount \
            point. Without -f, detaches once the library is served and logs to syslog; with \
            -f, stays in the foreground and logs to stderr. Ends on 'offlinefs unmount', \
            Ctrl-C or SIGTERM.

            Options (-o, comma-separated; all of them in offlinefs(1)):
              read-timeout=30s   how long a read waits for missing bytes (then EIO)
              outage-timeout=2m  the same for players and copiers (they ride out outages)
              playback-speed=1   how fast players play at most (reads count no faster)
              refresh=1s         how often the tree is checked against the library
              allow_other        let other users in (non-root: user_allow_other in
                                 /etc/fuse.conf)
              ro                 no command or toggle through the mount
              noauto_unmount     keep a dead mount after a crash (default: released)
              debug              log every FUSE request
            Always set: default_permissions, nosuid, nodev, fsname=offlinefs,
            subtype=offlinefs.
            Example: offlinefs mount ~/Media -o read-timeout=10s
            """)

    @OptionGroup var library: LibraryOptions
    @Argument(help: "An empty folder to mount on.") var mountpoint: String
    @Flag(name: .short, help: "Stay in the foreground, logging to stderr.") var foreground = false
    @Option(name: .short, help: ArgumentHelp("Mount options (see above).", valueName: "options")) var options: [String] = []

    func validate() throws {
        do {
            _ = try MountOptions.parse(options)
        } catch {
            throw ValidationError(error.description)
        }
    }

    func run() throws {
        let mountOptions = try MountOptions.parse(options)
        // Resolved here: the mount opens the library after it detached (and changed directory).
        let folder = library.folder
        // Checked by the mount once it is up (`MountStartup`), so mounting does not wait for it.
        try MountRunner(library: { try LibraryOptions.open(folder, integrityCheck: .later, creating: true) },
                        mountpoint: mountpoint, options: mountOptions, foreground: foreground).run()
    }
}
