import Glibc
import OfflineStore
import Synchronization

/// Side files shared by URL: when another item has cached a thumbnail or subtitle file whole
/// from the same URL (a podcast gives every episode one image), an item's cache file becomes a
/// hard link to it instead of a second fetch. Each item keeps its own ranges in the store;
/// the file system counts the links, so evicting one item's copy (`CacheFile.removeBytes`
/// unlinks a linked file) leaves the others'. Two items whose first reads of one URL overlap
/// fetch it each.
extension RangeFetcher {
    /// Before a side file is fetched (not on a `stat`: a listing asks every side file's size):
    /// another item's side file whose bytes have all arrived but
    /// are not yet claimed (the flush comes within `flushInterval`; a program reading each
    /// item's thumbnail in turn comes sooner) is claimed now. If it is a copy of this one's
    /// URL, its completion lets go of this one's state if nothing was fetched into it
    /// (`sideFileCompleted`), and the load that follows links it. Not under `files`: a flush
    /// calls back.
    func claimArrivedSideFiles(besides itemID: Int64) {
        let arrived = files.withLock { table in
            table.all.filter {
                $0.itemID != itemID && CacheLayout.isSideFile($0.key) && $0.isCompletelyCommitted == false && $0.hasEveryByte
            }
        }
        for file in arrived { file.flush() }
    }

    /// `stored` with all of its bytes present when another item's whole copy of its URL could
    /// be linked at its path; nil when it has bytes already, is not a side file, or no copy is
    /// to be had. Under `files` (store reads and file system calls only).
    func linkWholeSideFile(_ stored: StoredCacheFile, itemID: Int64, key: CacheFileKey) -> StoredCacheFile? {
        guard stored.ranges.isEmpty, CacheLayout.isSideFile(key) else { return nil }
        let url = stored.origin.url
        return sideFileLinks.withLock { _ -> StoredCacheFile? in
            guard let copy = try? index.wholeSideFile(url: url, excludingItem: itemID) else { return nil }
            let path = cacheFilePath(itemID: itemID, file: key)
            guard CacheFile.link(cacheFilePath(itemID: copy.itemID, file: copy.file), to: path, size: copy.size) else {
                return nil
            }
            guard (try? index.adoptWholeSideFile(itemID: itemID, file: key, url: url, copy: copy)) == true else {
                unlink(path)
                return nil
            }
            return StoredCacheFile(origin: stored.origin, validator: copy.validator, ranges: [0..<copy.size])
        }
    }

    /// A side file is whole: other items may link it from now on. Their states loaded while
    /// it was not (a listing's `stat` loads one) are let go if nothing was fetched into them,
    /// so their next use links this copy instead of fetching.
    func sideFileCompleted(_ file: CachedFile) {
        try? index.recordWholeSideFile(itemID: file.itemID, file: file.key, url: file.origin.url)
        let dropped = files.withLock { table in
            table.removeAll { id, other in
                id.itemID != file.itemID && CacheLayout.isSideFile(id.key) && other.origin.url == file.origin.url
                    && other.isIdle && other.progress.written == 0
            }
        }
        withExtendedLifetime(dropped) {}
    }
}
