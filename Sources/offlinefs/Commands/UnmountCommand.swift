import OfflineFUSE
import ArgumentParser
import Foundation

struct UnmountCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unmount",
        abstract: "Unmount a mounted library, also a dead one.",
        discussion: """
            Runs 'fusermount3 -u'. When the mount is dead ("Transport endpoint is not \
            connected", after the daemon was killed) or busy, detaches it lazily \
            ('fusermount3 -uz', or 'umount -l' as root): it disappears from the tree at once \
            and is released when the last open file closes.
            Example: offlinefs unmount ~/Media
            """)

    @Argument(help: "The mount point.") var mountpoint: String

    func run() throws {
        let path = MountTable.absolute(mountpoint)
        guard let type = MountTable.type(of: path) else {
            throw CLIError("\(path) is not mounted (findmnt -t fuse.offlinefs lists offlinefs mounts)")
        }
        // Never another filesystem: a lazy detach of a mistyped path (/home) would take it
        // away from every program using it.
        guard type == "fuse.offlinefs" else {
            throw CLIError("\(path) is a \(type) mount, not an offlinefs one: left mounted (umount unmounts other filesystems)")
        }
        if Self.runTool(["fusermount3", "-u", path]) == 0 { return }
        // Dead or busy: detach lazily.
        if Self.runTool(["fusermount3", "-uz", path]) == 0, !MountTable.isMounted(path) {
            print("\(path) was dead or busy: detached")
            return
        }
        if getuid() == 0, Self.runTool(["umount", "-l", path]) == 0, !MountTable.isMounted(path) {
            print("\(path) was dead or busy: detached")
            return
        }
        throw CLIError("cannot unmount \(path) (close the programs using it: fuser -vm \(path))")
    }

    /// Runs a tool from PATH (its messages go to our stderr); its exit status, or -1.
    static func runTool(_ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        do {
            try process.run()
        } catch {
            return -1
        }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
