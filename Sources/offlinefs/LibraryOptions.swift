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
            throw CLIError("cannot open the library at \(folder.path): \(ErrorMessages.reason(error)) (\(Self.hint(folder)))")
        }
    }

    /// What to do about a library that cannot be opened: another user's (the store is opened
    /// for writing, even to list), or a folder that is not usable.
    private static func hint(_ folder: URL) -> String {
        var filesystem = statvfs()
        if statvfs(folder.path, &filesystem) == 0, filesystem.f_flag & UInt(ST_RDONLY) != 0 {
            return "it is on a read-only filesystem: read it through its mount, or remount it read-write"
        }
        var info = stat()
        if stat(folder.path, &info) == 0, info.st_uid != getuid(), access(folder.path, W_OK) != 0 {
            let owner = getpwuid(info.st_uid).map { String(cString: $0.pointee.pw_name) } ?? "uid \(info.st_uid)"
            return "it belongs to \(owner): run offlinefs as \(owner), or read it through its mount"
        }
        return "use a writable folder: --library DIR or OFFLINEFS_LIBRARY"
    }
}

/// An error the user reads as "Error: <message>"; exit status 1.
struct CLIError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
