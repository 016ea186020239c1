import OfflineFUSE
import ArgumentParser
import Foundation

struct UnmountCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unmount",
        abstract: "Unmount a mounted library, also a dead one.",
        discussion: """
            Runs 'fusermount3 -u'. When the mount is dead ("Transport endpoint is not \
            connected", after the daemon was killed) or in use, detaches it lazily \
            ('fusermount3 -uz', or 'umount -l' as root) and says which it was: it disappears \
            from the tree at once and is released when the last open file closes.
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
        let plain = Self.runTool(["fusermount3", "-u", path])
        if plain.status == 0 { return }
        // Dead or busy: detach lazily, and say which it was (fusermount3's own line reads
        // like a failure).
        let why = plain.stderr.contains("not connected") ? "was dead (its engine had ended)"
            : plain.stderr.contains("busy") ? "is in use (programs have files open there): its engine ends once they close them"
            : "could not be unmounted at once (\(plain.stderr.trimmingCharacters(in: .whitespacesAndNewlines)))"
        var detached = Self.runTool(["fusermount3", "-uz", path]).status == 0 && !MountTable.isMounted(path)
        if !detached, getuid() == 0 {
            detached = Self.runTool(["umount", "-l", path]).status == 0 && !MountTable.isMounted(path)
        }
        if detached {
            print("\(path) \(why); detached")
            return
        }
        throw CLIError("cannot unmount \(path) (close the programs using it: fuser -vm \(path))")
    }

    /// Runs a tool from PATH: its exit status (-1 when it cannot run) and what it wrote to stderr.
    static func runTool(_ arguments: [String]) -> (status: Int32, stderr: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        do {
            try process.run()
        } catch {
            return (-1, "")
        }
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }
}
