import Foundation
public import OfflineEngine
import OfflineFUSE

/// What the mount asks the engine to do besides reading bytes (a narrow interface owned by
/// its consumer). `rm` of an item file evicts; the control file and xattr toggles of the
/// next issue add their calls here.
public protocol MountActions: Sendable {
    /// Drops the cached bytes of an item's media (thumbnail kept); the item stays listed as
    /// remote. Called only when no reader has the item open. Blocking (store and disk).
    func evict(itemID: Int64) throws
}

/// `MountActions` carried out by the engine's command performer, so `rm` obeys the same rules
/// as `evict` in the control file (a locked item is refused).
public struct EngineActions: MountActions {
    let commands: any CommandPerformer

    public init(commands: any CommandPerformer) {
        self.commands = commands
    }

    public func evict(itemID: Int64) throws {
        do {
            _ = try commands.perform(.evict(item: String(itemID)))
        } catch let error as EngineError {
            // The performer refuses a locked item: to `rm`, "operation not permitted".
            if case .invalidArgument = error { throw Errno.notPermitted }
            throw error
        }
    }
}
