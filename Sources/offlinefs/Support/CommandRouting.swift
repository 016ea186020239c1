import Foundation
import OfflineEngine

/// Where a state-changing command goes (DESIGN §5, §6): with no engine running, to the store
/// directly (holding the library lock meanwhile, so no engine starts halfway); with a mounted
/// engine, as a line into its control file (a renewal then waited for, as it is done
/// directly); with an unmounted one (`download --wait`), it is refused with the pid to wait for.
enum CommandRouting {
    static func perform(_ commands: [LibraryCommand], library: Library) throws -> [String] {
        if let control = RunningMount.controlFile(for: library.folder) {
            let client = ControlClient(controlFile: control, store: library.store)
            let outcomes = MountOutcomes(store: library.store, library: library.folder)
            var replies: [String] = []
            var failures: [String] = []
            // Each command is sent, refused or not, as without a mount.
            for command in commands {
                do {
                    let seq = try library.store.lastEventSeq()
                    try client.send(command)
                    // A licence is asked for on the engine's thread: its outcome is waited for.
                    switch command {
                    case .renew(let reference), .acquire(let reference):
                        let item = try ItemReference.resolve(reference, in: library.store)
                        switch try outcomes.licence(itemID: item.id, eventsAfter: seq) {
                        case .success(let message): replies.append("\(item.fileName ?? reference): \(message)")
                        case .failure(let error): failures.append(error.description)
                        }
                    default:
                        replies.append("sent to the mounted engine: \(ControlLanguage.format(command))")
                    }
                } catch {
                    failures.append("\(error)")
                }
            }
            for reply in replies { print(reply) }
            if !failures.isEmpty { throw CLIError(failures.joined(separator: "; ")) }
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
