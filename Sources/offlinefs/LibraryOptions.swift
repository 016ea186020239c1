import ArgumentParser
import Foundation
import OfflineEngine
import OfflineStore

/// `--library DIR`, shared by every command that touches a library.
struct LibraryOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Library folder (default: $OFFLINEFS_LIBRARY or ~/.local/share/offlinefs).", valueName: "dir"))
    var library: String?

    var folder: URL { LibraryLocation.resolve(explicit: library) }

    /// Opens the library; only a command that starts one (`creating`: `source add`, `set`,
    /// `mount`) makes it where there is none: a typo in a path must not leave an empty library
    /// behind and report "nothing requested".
    func open(integrityCheck: LibraryStore.IntegrityCheckTiming = .atOpen, creating: Bool = false) throws -> Library {
        try Self.open(folder, integrityCheck: integrityCheck, creating: creating)
    }

    static func open(_ folder: URL, integrityCheck: LibraryStore.IntegrityCheckTiming, creating: Bool) throws -> Library {
        if !creating && !FileManager.default.fileExists(atPath: folder.appendingPathComponent(LibraryStore.databaseFileName).path) {
            throw CLIError("no library at \(folder.path) ('offlinefs source add NAME URL' starts one there; "
                           + "another folder: --library DIR or OFFLINEFS_LIBRARY)")
        }
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
