import Foundation
import OfflineEngine
import OfflineFUSE
import OfflineStore

/// One name in a folder of the tree.
public struct TreeChild: Hashable, Sendable {
    public var name: FileName
    public var inode: UInt64
    public var isDirectory: Bool
}

/// A folder: its children in listing order and an index by name for `lookup`.
public struct TreeFolder: Hashable, Sendable {
    public var inode: UInt64
    public var parent: UInt64
    public var children: [TreeChild]
    var index: [FileName: Int]

    init(inode: UInt64, parent: UInt64) {
        self.inode = inode
        self.parent = parent
        self.children = []
        self.index = [:]
    }

    /// Adds `child` unless the name is taken (the first one wins: folders, then media files,
    /// then side files, so a crafted title can never hide another item).
    mutating func add(_ child: TreeChild) {
        // One hash of the name when it is free (the usual case); a taken name is put back.
        if let taken = index.updateValue(children.count, forKey: child.name) {
            index[child.name] = taken
            return
        }
        children.append(child)
    }

    mutating func reserveCapacity(_ count: Int) {
        children.reserveCapacity(count)
        index.reserveCapacity(count)
    }

    public func child(named name: FileName) -> TreeChild? {
        index[name].map { children[$0] }
    }
}

/// One file of an item in the tree: the media, or a thumbnail or subtitle beside it.
public struct TreeItemFile: Hashable, Sendable {
    public var name: FileName
    /// The cache file key (`media`, `thumbnail`, `subtitle.<lang>`), or `TreeItemFile.joinedKey`.
    public var key: CacheFileKey
    public var isMedia: Bool { key == "media" }

    /// A fully cached HLS stream as one contiguous `.ts`/`.mp4` file: not a cache file of its
    /// own, but the stream's init segment and segments end to end.
    public static let joinedKey = "hls.joined"
}

/// What the mount shows of one item.
public struct TreeItem: Hashable, Sendable {
    public var id: Int64
    /// Index = the file number in the inode (`NodeID.itemFile`): 0 is the media.
    public var files: [TreeItemFile]
    /// The media size (0 when unknown).
    public var size: UInt64
    /// `downloadedAt ?? publishedAt ?? addedAt`.
    public var modificationTime: Timestamp
    public var state: ItemState
    /// An HLS item: its media file is the local playlist, sized by the file system.
    public var isHLS: Bool
    /// When its licence expires (opens fail with `EKEYEXPIRED` from then), if it does.
    public var licenceExpiresAt: Date?

    /// Whether opens of any of its files are refused with `EKEYEXPIRED` at `now`.
    public func licenceHasExpired(at now: Date) -> Bool {
        licenceExpiresAt.map { $0 <= now } ?? false
    }

    public init(id: Int64, files: [TreeItemFile], size: UInt64, modificationTime: Timestamp, state: ItemState,
                isHLS: Bool = false, licenceExpiresAt: Date? = nil) {
        self.id = id
        self.files = files
        self.size = size
        self.modificationTime = modificationTime
        self.state = state
        self.isHLS = isHLS
        self.licenceExpiresAt = licenceExpiresAt
    }
}

/// The whole tree, immutable: built from store queries in one go (`TreeBuilder`) and swapped
/// whole when the store changes, so requests read it without touching the store.
public final class TreeSnapshot: Sendable {
    /// The folders under `state/`, in this order (DESIGN §2).
    public static let stateFolders: [ItemState] = [.queued, .downloading, .idle, .paused, .cached, .partiallyCached, .failed]

    public let folders: [UInt64: TreeFolder]
    public let items: [Int64: TreeItem]
    /// Owner of every file and folder: the mounting user.
    public let uid: UInt32
    public let gid: UInt32
    /// Folders' times: when the mount started.
    public let folderTime: Timestamp

    init(folders: [UInt64: TreeFolder], items: [Int64: TreeItem], uid: UInt32, gid: UInt32, folderTime: Timestamp) {
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
        if folders[inode] != nil {
            var attributes = FileAttributes.directory(inode: inode, permissions: 0o755)
            attributes.uid = uid
            attributes.gid = gid
            attributes.setTimes(folderTime)
            return attributes
        }
        if case .hlsPart(let itemID, _)? = NodeID(inode: inode), let item = items[itemID] {
            var attributes = FileAttributes.file(inode: inode, permissions: 0o644, size: 0)
            attributes.uid = uid
            attributes.gid = gid
            attributes.setTimes(item.modificationTime)
            return attributes
        }
        guard let (item, file) = itemFile(inode) else { return nil }
        var attributes = FileAttributes.file(inode: inode, permissions: 0o644, size: file == 0 && !item.isHLS ? item.size : 0)
        attributes.uid = uid
        attributes.gid = gid
        attributes.setTimes(item.modificationTime)
        return attributes
    }

    /// An empty tree (before the first build, or when the store cannot be read).
    public static func empty(uid: UInt32, gid: UInt32, folderTime: Timestamp) -> TreeSnapshot {
        var builder = TreeBuilder(uid: uid, gid: gid, folderTime: folderTime, recentCutoff: .distantFuture)
        return builder.finish()
    }
}
