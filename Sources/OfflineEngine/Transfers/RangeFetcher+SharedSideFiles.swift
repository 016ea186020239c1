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
    /// Before a side file's first load: links another item's whole copy of its URL when this
    /// item has none of its bytes. Not under `files`: a copy still in memory is flushed first,
    /// and a flush calls back into the fetcher.
    func linkWholeSideFile(itemID: Int64, key: CacheFileKey) {
        guard let stored = try? index.load(itemID: itemID, file: key), stored.ranges.isEmpty else { return }
        let url = stored.origin.url
        // A copy fetched a moment ago may have every byte written but not yet claimed (the
        // flush comes within `flushInterval`): a program reading each item's thumbnail in turn
        // comes that soon. It is claimed now.
        let inMemory = files.withLock { table in
            table.all.first { $0.itemID != itemID && CacheLayout.isSideFile($0.key) && $0.origin.url == url && $0.hasEveryByte }
        }
        _ = inMemory?.flush()
        sideFileLinks.withLock { _ in
            guard let copy = try? index.wholeSideFile(url: url, excludingItem: itemID) else { return }
            let path = cacheFilePath(itemID: itemID, file: key)
            guard CacheFile.link(cacheFilePath(itemID: copy.itemID, file: copy.file), to: path, size: copy.size) else { return }
            if (try? index.adoptWholeSideFile(itemID: itemID, file: key, url: url, copy: copy)) != true { unlink(path) }
        }
    }
}
