import Dispatch
import Glibc
import OfflineStore
import Synchronization

/// Side files shared by URL: when another item has cached a thumbnail or subtitle file whole
/// from the same URL (a podcast gives every episode one image), an item's cache file becomes a
/// hard link to it instead of a second fetch. Each item keeps its own ranges in the store;
/// the file system counts the links, so evicting one item's copy (`CacheFile.removeBytes`
/// unlinks a linked file) leaves the others'. A first read of one item's side file while
/// another item's of the same URL is being fetched waits for that fetch.
extension RangeFetcher {
    /// The cache of a file about to be read (not on a `stat`: a listing asks every side
    /// file's size). A side file with no byte yet takes another item's whole copy of its URL
    /// if there is one, even when its state was loaded before that copy was whole.
    func fileToRead(itemID: Int64, key: CacheFileKey) throws(FetchError) -> CachedFile {
        let cached = try cachedFile(itemID: itemID, key: key)
        if CacheLayout.isSideFile(key), cached.progress.written == 0 { takeCopy(into: cached) }
        return cached
    }

    /// Links another item's whole copy of `file`'s URL into `file` if it has no byte yet.
    func takeCopy(into file: CachedFile) {
        claimArrivedSideFiles(besides: file.itemID)
        file.takeWholeCopy { stored in linkWholeSideFile(stored, itemID: file.itemID, key: file.key) }
    }

    /// Starts a read of `file`: `waiting` for another item's running fetch of the same URL
    /// when `file` is a side file with no byte and no fetch of its own (a file manager's
    /// thumbnails and a thumbnailer, listing one podcast), else `orFetching`, which fetches.
    /// For an empty side file both steps run under `sideFileStarts`, so of two first reads
    /// at once of one URL one fetches and the other waits; a copy made whole since `file`
    /// was opened is taken first.
    func startingSideFile<T>(_ file: CachedFile, waiting: (CachedFile) -> T, orFetching fetch: () -> T) -> T {
        guard CacheLayout.isSideFile(file.key), file.isEmptyAndIdle else { return fetch() }
        return sideFileStarts.withLock { _ in
            if let other = sameSideFileBeingFetched(as: file) { return waiting(other) }
            if file.isEmptyAndIdle { takeCopy(into: file) }
            return fetch()
        }
    }

    /// Another item's side file of the same URL with a fetch running.
    private func sameSideFileBeingFetched(as file: CachedFile) -> CachedFile? {
        files.withLock { table in
            table.all.first {
                $0.itemID != file.itemID && CacheLayout.isSideFile($0.key) && $0.origin.url == file.origin.url && $0.isFetching
            }
        }
    }

    /// Another item's side file whose bytes have all arrived but are not yet claimed (the
    /// flush comes within `flushInterval`; a program reading each item's thumbnail in turn
    /// comes sooner) is claimed now, so the store knows it whole. Not under `files`: a flush
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
}
