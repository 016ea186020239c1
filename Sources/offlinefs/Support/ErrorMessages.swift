import ArgumentParser
import Foundation
import OfflineEngine
import OfflineFUSE
import OfflineStore

/// The one place where errors from the layers below get the hint a user needs next: the
/// store's sentences say what went wrong, the CLI adds which command helps.
enum ErrorMessages {
    static func translate(_ error: any Error) -> any Error {
        if let held = error as? EngineLock.Held { return CLIError(describe(held)) }
        guard let store = error as? StoreError else { return error }
        switch store.code {
        case .duplicateSource:
            return CLIError("\(store.message) (offlinefs source list shows it; pick another name or remove it first)")
        case .unknownSource:
            return CLIError("\(store.message) (offlinefs source list shows the sources)")
        case .unknownItem:
            return CLIError("\(store.message) (offlinefs ls lists the items)")
        case .unknownPolicy, .invalidPolicyValue, .invalidSourceName:
            return CLIError(store.message)
        case .corruptDatabase, .databaseError:
            return CLIError("\(store.message): \(reason(store)) (check the library folder, or use another with --library)")
        }
    }

    /// Who holds the library, and what to do: a mount to unmount; an engine without one to
    /// wait for; or the engine of a mount already detached (a lazy unmount while programs had
    /// files open, or a sync finishing), which no unmount reaches any more.
    static func describe(_ held: EngineLock.Held) -> String {
        guard let mountpoint = held.mountpoint, MountTable.type(of: mountpoint) != "fuse.offlinefs" else { return held.description }
        let pid = held.pid.map(String.init) ?? "unknown"
        return "the engine of a mount detached from \(mountpoint) (pid \(pid)) still runs: programs still have its files open, "
            + "or it finishes a sync; it ends once they are done, or stop it now (kill \(pid)) and try again"
    }

    /// The shortest true reason for an error: the POSIX error text when there is one
    /// ("Not a directory"), not Foundation's nested NSError dump.
    static func reason(_ error: any Error) -> String {
        if let store = error as? StoreError {
            return store.underlying.map(reason) ?? store.message
        }
        if let posix = posixText(error as NSError) { return posix }
        return "\(error)"
    }

    private static func posixText(_ error: NSError) -> String? {
        if error.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(error.code))) }
        // On Linux the underlying error is stored as a Swift `Error`, not always an NSError.
        guard let underlying = error.userInfo[NSUnderlyingErrorKey] as? any Error else { return nil }
        return posixText(underlying as NSError)
    }
}
