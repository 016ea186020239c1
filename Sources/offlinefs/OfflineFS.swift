import Glibc
import ArgumentParser
import CSystemShim
import OfflineHTTP

@main
struct OfflineFS: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "offlinefs",
        abstract: "An offline media library, shown as files.",
        discussion: """
            Keeps a catalog of remote media (sources, categories, items) in a library folder, \
            downloads what you ask for, and mounts the library as a filesystem.

            The library folder comes from --library, else $OFFLINEFS_LIBRARY, \
            else $XDG_DATA_HOME/offlinefs (~/.local/share/offlinefs).
            """,
        version: OfflineVersion.string,
        subcommands: [
            SourceCommand.self, SyncCommand.self, ListCommand.self,
            SetCommand.self, GetCommand.self, DownloadCommand.self,
            PauseCommand.self, ResumeCommand.self, CancelCommand.self, DeleteCommand.self,
            EvictCommand.self, LockCommand.self, UnlockCommand.self, RenewCommand.self, AcquireCommand.self,
            PlayedCommand.self, WatchedCommand.self, UnwatchedCommand.self, VariantsCommand.self, StatusCommand.self,
            ActionCommand.self, DesktopCommand.self,
            MountCommand.self, UnmountCommand.self, DemoCommand.self, MountHelperCommand.self,
        ]
    )

    /// Runs the command; a failure prints one `Error: …` line (with the next step) and exits
    /// 1, a usage error exits 64 (EX_USAGE) with the usage (man page, EXIT STATUS).
    static func main() {
        // Two malloc arenas, not eight per core: a mount's many short-lived and pooled
        // threads each take an arena, and every arena keeps its own high-water mark, so a
        // mount on a busy machine grows for good. Blocks of 256 KiB and more (a sync's pages,
        // a tree's tables) are mapped on their own and go back whole when freed, instead of
        // leaving holes in the heap that the next minute's smaller blocks pin
        // (docs/decisions.md, "Malloc tuned for a long-running mount").
        csystem_tune_malloc(2, 256 << 10, 1 << 20)
        do {
            try refuseArgumentsNotInUTF8()
            var command = try parseAsRoot(Self.valuesKeptAsValues(Array(CommandLine.arguments.dropFirst())))
            try command.run()
            try OutputError.checkPrinted()
        } catch {
            exit(withError: ErrorMessages.translate(error))
        }
    }

    /// An argument whose bytes are not UTF-8 reaches the program with U+FFFD in their place:
    /// it would name another item, or make a source named `bad\u{FFFD}name`. Refused, as the
    /// control file refuses such a line.
    static func refuseArgumentsNotInUTF8() throws {
        for index in 1..<Int(CommandLine.argc) {
            guard let argument = CommandLine.unsafeArgv[index] else { continue }
            let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(argument).assumingMemoryBound(to: UInt8.self), count: strlen(argument))
            if String(validating: bytes, as: UTF8.self) == nil {
                throw ValidationError("argument \(index) (\(CommandLine.arguments[index])) is not valid UTF-8")
            }
        }
    }

    /// `offlinefs set file-size-max -1`: the parser takes a value that starts with a dash
    /// for options and reports the value missing; marked as a value (`--`), the policy's own
    /// check says what is wrong with it.
    static func valuesKeptAsValues(_ arguments: [String]) -> [String] {
        guard arguments.first == "set", let value = arguments.last, arguments.count >= 3, value.count > 1,
              value.hasPrefix("-"), value.dropFirst().first?.isNumber == true, !arguments.contains("--") else { return arguments }
        return arguments.dropLast() + ["--", value]
    }
}
