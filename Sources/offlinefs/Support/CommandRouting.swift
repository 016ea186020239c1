import Foundation
import OfflineEngine

/// Where a state-changing command goes (DESIGN §5, §6): with no engine running, to the store
/// directly (holding the library lock meanwhile, so no engine starts halfway); with a mounted
/// engine, as a line into its control file; with an unmounted one (`download --wait`), it is
/// refused with the pid to wait for.
enum CommandRouting {
    static func perform(_ commands: [LibraryCommand], library: Library) throws -> [String] {
        if let control = RunningMount.controlFile(for: library.folder) {
            let client = ControlClient(controlFile: control, store: library.store)
            var replies: [String] = []
            for command in commands {
                try client.send(command)
                replies.append("sent to the mounted engine: \(ControlLanguage.format(command))")
            }
            for reply in replies { print(reply) }
            return replies
        }
        let lock = try EngineLock(folder: library.folder)
        defer { withExtendedLifetime(lock) {} }
        let performer = LibraryCommands(library: library)
        var replies: [String] = []
        var failures: [String] = []
        for command in commands {
            do { replies.append(try performer.perform(command)) } catch { failures.append("\(error)") }
        }
        for reply in replies { print(reply) }
        if !failures.isEmpty { throw CLIError(failures.joined(separator: "; ")) }
        return replies
    }
}
