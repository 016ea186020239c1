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

    /// A file of a listed folder: where it is, its item, its time.
    private struct Listed: Hashable {
        var folder: UInt64
        var name: FileName
        var path: String
    }
    private struct State {
        /// The listed paths of each item, for removals and `fail/` clean-ups.
        var paths: [Int64: Set<Listed>] = [:]
        /// Entries known to be written for a path at an mtime (no re-read of the PNG).
        var written: [String: Int] = [:]
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
            var done = 0
            for child in folder.children where !child.isDirectory {
                guard case .itemFile(let itemID, file: 0)? = NodeID(inode: child.inode), let item = snapshot.items[itemID] else { continue }
                let listed = Listed(folder: inode, name: child.name, path: mountpoint + "/" + folderPath + "/" + child.name.description)
                state.withLock { _ = $0.paths[itemID, default: []].insert(listed) }
                guard done < Self.perListing, item.files.contains(where: { $0.key == "thumbnail" }) else { continue }
                if write(listed.path, itemID: itemID, mtime: item.modificationTime.seconds) { done += 1 }
            }
        }
    }

    /// The tree changed: entries of listed paths that are gone go too, and items now cached
    /// lose their `fail/` entries (a thumbnailer may now read them whole).
    func treeChanged(from old: TreeSnapshot, to new: TreeSnapshot) {
        queue.async { [self] in
            let tracked = state.withLock { $0.paths }
            for (itemID, listed) in tracked {
                let newItem = new.items[itemID]
                let nowCached = newItem?.state == .cached && old.items[itemID]?.state != .cached
                for entry in listed {
                    let present = newItem != nil && new.folders[entry.folder]?.child(named: entry.name) != nil
                    // Most refreshes change nothing of a listed path: no URI or MD5 made then.
                    guard !present || nowCached, let file = cache.entryName(of: entry.path) else { continue }
                    if !present {
                        cache.remove(file)
                        state.withLock { s in
                            s.paths[itemID]?.remove(entry)
                            if s.paths[itemID]?.isEmpty == true { s.paths[itemID] = nil }
                            s.written[entry.path] = nil
                        }
                    } else if nowCached {
                        cache.removeFailures(file)
                    }
                }
            }
        }
    }

    /// Waits until what was asked so far is done (tests).
    func drain() {
        queue.sync {}
    }

    /// Writes the entries of `path` unless they are there for `mtime`; whether it wrote.
    private func write(_ path: String, itemID: Int64, mtime: Int) -> Bool {
        if state.withLock({ $0.written[path] }) == mtime { return false }
        if cache.holds(path, mtime: mtime) {
            state.withLock { $0.written[path] = mtime }
            return false
        }
        guard let source = thumbnail(itemID) else { return false }
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
