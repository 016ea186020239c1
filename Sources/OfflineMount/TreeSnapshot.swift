import Foundation
public import OfflineEngine
public import OfflineFUSE

/// The whole tree, immutable: built from store queries in one go (`TreeBuilder`) and swapped
/// whole when the store changes, so requests read it without touching the store.
public final class TreeSnapshot: Sendable {
    /// The folders under `state/`, in this order (DESIGN §2).
    public static let stateFolders: [ItemState] = [.queued, .downloading, .idle, .paused, .cached, .partiallyCached, .failed]

    public let folders: [UInt64: TreeFolder]
    public let items: TreeItems
    /// Owner of every file and folder: the mounting user.
    public let uid: UInt32
    public let gid: UInt32
    /// Folders' times: when the library last changed before the mount started, or for a folder
    /// whose names changed since, when they last did (`changeTimes`).
    public let folderTime: Timestamp
    /// When each folder that changed since the mount started last gained or lost a name:
    /// programs that rescan a folder only when its time moves (Kodi's library update) see
    /// items come and go.
    let changeTimes: [UInt64: Timestamp]
    /// Each source's `folder.jpg` (`sidecars nfo`), by source id.
    public let artworks: [Int64: SourceArtwork]

    public struct SourceArtwork: Sendable, Equatable {
        public var size: UInt64
        /// When the artwork last moved to another URL, else when the source was added: no
        /// remount moves it, so a backup copies it once.
        public var time: Timestamp
    }

    init(folders: [UInt64: TreeFolder], items: TreeItems, uid: UInt32, gid: UInt32, folderTime: Timestamp,
         artworks: [Int64: SourceArtwork] = [:], changeTimes: [UInt64: Timestamp] = [:]) {
        self.artworks = artworks
        self.changeTimes = changeTimes
        self.folders = folders
        self.items = items
        self.uid = uid
        self.gid = gid
        self.folderTime = folderTime
    }

    /// The item file an inode names, if it is one and still listed.
    public func itemFile(_ inode: UInt64) -> (item: TreeItem, file: Int)? {
        guard case .itemFile(let id, let file)? = NodeID(inode: inode), let item = items[id],
              file < item.files.count else { return nil }
        return (item, file)
    }

    /// Attributes from the tree alone; a side file's size, an HLS playlist's and an HLS
    /// part's are 0 here (the file system fills them in from the cache and the stream).
    public func attributes(_ inode: UInt64) -> FileAttributes? {
        if let folder = folders[inode] {
            var attributes = FileAttributes.directory(inode: inode, permissions: 0o755)
            attributes.uid = uid
            attributes.gid = gid
            attributes.setTimes(changeTimes[inode] ?? folderTime)
            attributes.linkCount = 2 + UInt64(folder.subfolderCount)
            return attributes
        }
        if case .sourceArtwork(let id)? = NodeID(inode: inode), let artwork = artworks[id] {
            var attributes = FileAttributes.file(inode: inode, permissions: 0o644, size: artwork.size)
            attributes.uid = uid
            attributes.gid = gid
            attributes.setTimes(artwork.time)
            return attributes
        }
        if case .hlsPart(let itemID, _)? = NodeID(inode: inode), let item = items[itemID] {
            var attributes = FileAttributes.file(inode: inode, permissions: 0o644, size: 0)
            attributes.uid = uid
            attributes.gid = gid
            attributes.setTimes(item.modificationTime)
            // In the `.hls/<id>/` of every folder that lists the item.
            attributes.linkCount = UInt64(max(1, item.folderCount))
            return attributes
        }
        guard let (item, file) = itemFile(inode) else { return nil }
        var attributes = FileAttributes.file(inode: inode, permissions: 0o644, size: file == 0 && !item.isHLS ? item.size : 0)
        attributes.uid = uid
        attributes.gid = gid
        attributes.setTimes(file == 0 ? item.modificationTime : item.sidesModificationTime)
        attributes.linkCount = UInt64(max(1, item.folderCount))
        return attributes
    }

    /// Every item listed in the folder or in a folder below it, each once (an item is in
    /// several folders; the root holds the whole library once).
    public func items(under inode: UInt64) -> [TreeItem] {
        var found: [TreeItem] = []
        var seen = Set<Int64>()
        var visited = Set<UInt64>()
        var pending = [inode]
        while let next = pending.popLast() {
            guard visited.insert(next).inserted, let folder = folders[next] else { continue }
            for position in folder.children.indices {
                let child = folder.children.node(at: position)
                if child.isDirectory {
                    pending.append(child.inode)
                } else if case .itemFile(let id, 0)? = NodeID(inode: child.inode), seen.insert(id).inserted, let item = items[id] {
                    found.append(item)
                }
            }
        }
        return found
    }

    /// This tree with the time of each folder whose names differ from `previous`'s set to
    /// `now` (the others keep theirs).
    func dated(after previous: TreeSnapshot, now: Timestamp) -> TreeSnapshot {
        var times = previous.changeTimes
        for (inode, folder) in folders where previous.folders[inode]?.children != folder.children {
            times[inode] = now
        }
        for inode in times.keys where folders[inode] == nil { times[inode] = nil }
        return TreeSnapshot(folders: folders, items: items, uid: uid, gid: gid, folderTime: folderTime,
                            artworks: artworks, changeTimes: times)
    }

    /// An empty tree (before the first build, or when the store cannot be read).
    public static func empty(uid: UInt32, gid: UInt32, folderTime: Timestamp) -> TreeSnapshot {
        var builder = TreeBuilder(uid: uid, gid: gid, folderTime: folderTime, recentCutoff: .distantFuture)
        return builder.finish()
    }
}
