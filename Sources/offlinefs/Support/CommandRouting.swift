import Foundation
import OfflineEngine

/// Where a state-changing command goes (DESIGN §5, §6): with no engine running, to the store
/// directly (holding the library lock meanwhile, so no engine starts halfway); with a mounted
/// engine, as a line into its control file; with an unmounted one (`download --wait`), it is
/// refused with the pid to wait for.
enum CommandRouting {
    static func perform(_ commands: [LibraryCommand], controlLines: [String], library: Library) throws -> [String] {
        let lock: EngineLock
        do {
            lock = try EngineLock(folder: library.folder)
        } catch {
            guard let holder = EngineLock.holder(folder: library.folder) else { throw CLIError("\(error)") }
            guard let mountpoint = holder.mountpoint else {
                throw CLIError("an engine (pid \(holder.pid)) is running on this library without a mount; "
                               + "wait for it to end, or stop it, and try again")
            }
            try writeControl(controlLines, mountpoint: mountpoint)
            return controlLines.map { "sent to the engine mounted on \(mountpoint): \($0)" }
        }
        defer { withExtendedLifetime(lock) {} }
        let performer = LibraryCommands(library: library)
        var replies: [String] = []
        var failures: [String] = []
        for command in commands {
            do { replies.append(try performer.perform(command)) } catch { failures.append("\(error)") }
        }
        for reply in replies { print(reply) }
        if !failures.isEmpty { throw CLIError(failures.joined(separator: "\n")) }
        return replies
    }

    private static func writeControl(_ lines: [String], mountpoint: String) throws {
        let path = mountpoint + "/.control"
        guard let handle = FileHandle(forWritingAtPath: path) else {
            throw CLIError("cannot open \(path) (is the mount alive?)")
        }
        defer { try? handle.close() }
        for line in lines {
            do {
                try handle.write(contentsOf: Data((line + "\n").utf8))
            } catch {
                throw CLIError("the engine refused '\(line)': see \(mountpoint)/.events")
            }
        }
    }
}
