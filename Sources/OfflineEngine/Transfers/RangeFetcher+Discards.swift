import OfflineStore
import Synchronization

/// Forgetting cached bytes: an eviction's, a cancel's, a removed source's.
extension RangeFetcher {
    /// Forgets every cached byte of the file (store first, then disk) and stops its fetches.
    public func discard(itemID: Int64, file: CacheFileKey) throws {
        try discard([(itemID, file)])
    }

    /// Forgets what it holds of the items' files, and their bytes (items the store no longer has).
    public func discardAll(ofItems itemIDs: [Int64]) throws {
        let held = files.withLock { table in itemIDs.flatMap { table.files(of: $0) } }
        try discard(held.map { ($0.itemID, $0.key) })
    }

    /// Forgets every cached byte of each file, all of them in one store transaction (evicting
    /// hundreds of items costs one synced commit). A file that cannot be loaded is skipped
    /// and its error thrown once the others are gone.
    public func discard(_ targets: [(itemID: Int64, file: CacheFileKey)]) throws {
        var firstError: (any Error)?
        var cached: [CachedFile] = []
        for target in targets {
            do {
                let file = try cachedFile(itemID: target.itemID, key: target.file)
                file.cancelAll(FetchError(.cancelled, "the cached bytes of item \(target.itemID) were discarded"))
                cached.append(file)
            } catch {
                // No URL (a content id the lookup did not find): nothing was ever fetched.
                if error.code != .noSuchItem { firstError = firstError ?? error }
            }
        }
        // Waiters are told first: they may call back.
        try CachedFile.discardBytes(of: cached, index: index, linkLock: sideFileLinks)
        // Its origin may change with its bytes (an HLS key names another rendition's URL
        // then): the next use loads the file anew.
        files.withLock { table in
            for file in cached { table.remove(CachedFileTable.FileID(itemID: file.itemID, key: file.key)) }
        }
        if let firstError { throw firstError }
    }
}
