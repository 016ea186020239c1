import ArgumentParser
import Foundation
import OfflineEngine
import OfflineStore

/// `--library DIR`, shared by every command that touches a library.
struct LibraryOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Library folder (default: $OFFLINEFS_LIBRARY or ~/.local/share/offlinefs).", valueName: "dir"))
    var library: String?

    var folder: URL { LibraryLocation.resolve(explicit: library) }

    func open(integrityCheck: LibraryStore.IntegrityCheckTiming = .atOpen) throws -> Library {
        do {
            return try Library(folder: folder, integrityCheck: integrityCheck)
        } catch {
            throw CLIError("cannot open the library at \(folder.path): \(ErrorMessages.reason(error)) "
                           + "(use a writable folder: --library DIR or OFFLINEFS_LIBRARY)")
        }
    }
}

/// An error the user reads as "Error: <message>"; exit status 1.
struct CLIError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
