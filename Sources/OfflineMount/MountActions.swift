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

/// `MountActions` done directly on the store and the cache file, until the engine offers an
/// eviction call (then this type goes): the store forgets the ranges first, then the bytes
/// go (the order the store asks for), and the item returns to `discovered`.
///
/// Caveat for the lead: an engine that keeps its own in-memory map of present ranges must
/// hear about this; the real engine call should replace this type.
public struct StoreEvictor: MountActions {
    let store: LibraryStore
    let byteSource: any ItemByteSource

    public init(store: LibraryStore, byteSource: any ItemByteSource) {
        self.store = store
        self.byteSource = byteSource
    }

    public func evict(itemID: Int64) throws {
        guard let item = try store.item(id: itemID) else { throw StoreError(.unknownItem, "no item with id \(itemID)") }
        try store.clearPresentRanges(itemID: itemID, file: "media")
        let path = byteSource.cacheFilePath(itemID: itemID, file: "media")
        if truncate(path, 0) != 0 && errno != ENOENT {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        try store.setDownloaded(itemID: itemID, at: nil)
        if item.state != .discovered {
            try store.setState(itemID: itemID, state: .discovered)
        }
    }
}
