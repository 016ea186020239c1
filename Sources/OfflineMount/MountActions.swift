import Foundation
import OfflineEngine
import OfflineStore

/// What the mount asks the engine to do besides reading bytes (a narrow interface owned by
/// its consumer). `rm` of an item file evicts; the control file and xattr toggles of the
/// next issue add their calls here.
public protocol MountActions: Sendable {
    /// Drops the cached bytes of an item's media (thumbnail kept); the item stays listed as
    /// remote. Called only when no reader has the item open. Blocking (store and disk).
    func evict(itemID: Int64) throws
}

/// `MountActions` carried out by the engine's transfer machinery.
public struct EngineActions: MountActions {
    let engine: TransferEngine

    public init(engine: TransferEngine) {
        self.engine = engine
    }

    public func evict(itemID: Int64) throws {
        try engine.evict(itemID: itemID)
    }
}
