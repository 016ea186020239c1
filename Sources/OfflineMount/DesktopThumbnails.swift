import Dispatch
import Foundation
import Logging
import OfflineEngine
import OfflineFUSE
import Synchronization

/// Thumbnails the desktop finds ready, so a file manager shows items without running a
/// thumbnailer on their media, which would fetch it. When a folder under `sources/` or
/// `categories/` is listed, each of its items with a catalog thumbnail gets its entries in
/// the desktop's thumbnail cache (`DesktopThumbnailCache`), for the file's path and
/// `st_mtime` (docs/desktop.md).
///
/// All work runs on one background queue, at most `perListing` items per listing. Entries of
/// paths that leave a folder are removed (a removed source takes its items' with it), and an
/// item that becomes cached loses the `fail/` entries a thumbnailer left for it.
final class DesktopThumbnails: Sendable {
    static let perListing = 64

    private let mountpoint: String
    private let cache: DesktopThumbnailCache
    private let thumbnail: @Sendable (_ itemID: Int64) -> String?
    private let enabled: @Sendable () -> Bool
    private let logger: Logger
    private let queue = DispatchQueue(label: "offlinefs.desktop-thumbnails")

    private struct State {
        /// The folders listed so far, whose files' entries follow the tree: a set of folders,
        /// not of paths, so that memory does not grow with the items listed.
        var listedFolders: Set<UInt64> = []
        /// Entries known to be written for a path at an mtime (no re-read of the PNG).
        var written: [String: Int] = [:]
        /// Paths whose catalog thumbnail could not be had at an mtime: not asked again at every
        /// listing (a 404 each time), only once the item's files change.
        var unavailable: [String: Int] = [:]
    }
    private let state = Mutex(State())  // leaf lock

    /// - Parameters:
    ///   - thumbnail: the path of an item's whole thumbnail cache file, fetched first when
    ///     needed (blocking), or nil.
    ///   - enabled: the policy `thumbnail-cache`.
    init(mountpoint: String, cacheFolder: String, thumbnail: @escaping @Sendable (Int64) -> String?,
         enabled: @escaping @Sendable () -> Bool, logger: Logger) {
        self.mountpoint = mountpoint
        cache = DesktopThumbnailCache(folder: cacheFolder)
        self.thumbnail = thumbnail
        self.enabled = enabled
        self.logger = logger
    }

    /// A folder was listed: its items' thumbnails, in the background.
    func folderListed(_ inode: UInt64, in snapshot: TreeSnapshot) {
        guard let folderPath = Self.path(of: inode, in: snapshot), folderPath.hasPrefix("sources/") || folderPath.hasPrefix("categories/"),
              let folder = snapshot.folders[inode] else { return }
        queue.async { [self] in
            guard enabled() else { return }
            state.withLock { _ = $0.listedFolders.insert(inode) }
            var done = 0
            for child in folder.children where !child.isDirectory && done < Self.perListing {
                guard case .itemFile(let itemID, file: 0)? = NodeID(inode: child.inode), let item = snapshot.items[itemID],
                      item.files.contains(where: { $0.key == "thumbnail" }) else { continue }
                let path = mountpoint + "/" + folderPath + "/" + child.name.description
                if write(path, itemID: itemID, mtime: item.modificationTime.seconds) { done += 1 }
            }
        }
    }

    /// The tree changed: entries of the files of listed folders that are gone go too, and
    /// items now cached lose their `fail/` entries (a thumbnailer may now read them whole).
    func treeChanged(from old: TreeSnapshot, to new: TreeSnapshot) {
        queue.async { [self] in
            let listed = state.withLock { $0.listedFolders }
            guard !listed.isEmpty else { return }
            var nowCached = Set<Int64>()
            for item in new.items where item.state == .cached && old.items[item.id]?.state != .cached {
                nowCached.insert(item.id)
            }
            for inode in listed {
                guard let oldFolder = old.folders[inode], let folderPath = Self.path(of: inode, in: old) else { continue }
                let newFolder = new.folders[inode]
                if newFolder == nil { state.withLock { _ = $0.listedFolders.remove(inode) } }
                // Most refreshes change nothing of a folder: its files are walked only when it
                // changed, else only the items now cached are looked up in it.
                let unchanged = newFolder.map { $0.children == oldFolder.children } ?? false
                let candidates: [TreeChild] = unchanged
                    ? nowCached.compactMap { id in
                        old.items[id]?.files.first.flatMap { oldFolder.child(named: $0.name) }
                            .flatMap { NodeID(inode: $0.inode) == .itemFile(itemID: id, file: 0) ? $0 : nil }
                    }
                    : oldFolder.children.filter { !$0.isDirectory }
                for child in candidates {
                    guard case .itemFile(let itemID, file: 0)? = NodeID(inode: child.inode) else { continue }
                    let present = new.items[itemID] != nil && newFolder?.child(named: child.name) != nil
                    guard !present || nowCached.contains(itemID) else { continue }
                    let path = mountpoint + "/" + folderPath + "/" + child.name.description
                    guard let file = cache.entryName(of: path) else { continue }
                    if !present {
                        cache.remove(file)
                        state.withLock {
                            _ = $0.written.removeValue(forKey: path)
                            _ = $0.unavailable.removeValue(forKey: path)
                        }
                    } else {
                        cache.removeFailures(file)
                    }
                }
            }
        }
    }

    /// Writes the entries of `path` unless they are there for `mtime`; whether it wrote.
    private func write(_ path: String, itemID: Int64, mtime: Int) -> Bool {
        if state.withLock({ $0.written[path] }) == mtime, cache.exists(path) { return false }
        if state.withLock({ $0.unavailable[path] }) == mtime { return false }
        if cache.holds(path, mtime: mtime) {
            state.withLock { $0.written[path] = mtime }
            return false
        }
        guard let source = thumbnail(itemID) else {
            state.withLock { $0.unavailable[path] = mtime }
            return false
        }
        do {
            try cache.write(path, mtime: mtime, from: source)
            state.withLock { $0.written[path] = mtime }
            return true
        } catch {
            logger.info("no desktop thumbnail for \(path): \(error)")
            return false
        }
    }

    /// A folder's path in the mount (`sources/acme`, `categories/news/local`), from its parents.
    static func path(of inode: UInt64, in snapshot: TreeSnapshot) -> String? {
        var names: [String] = []
        var current = inode
        while current != NodeID.root.inode {
            guard let folder = snapshot.folders[current], let parent = snapshot.folders[folder.parent],
                  let child = parent.children.first(where: { $0.inode == current }) else { return nil }
            names.append(child.name.description)
            current = folder.parent
            if names.count > 64 { return nil }
        }
        return names.reversed().joined(separator: "/")
    }
}
