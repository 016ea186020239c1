public import Foundation
public import OfflineEngine
public import OfflineFUSE

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
    private var index = NameIndex()

    init(inode: UInt64, parent: UInt64) {
        self.inode = inode
        self.parent = parent
        self.children = []
    }

    /// Adds `child` unless the name is taken (the first one wins: folders, then media files,
    /// then side files, so a crafted title can never hide another item).
    mutating func add(_ child: TreeChild) {
        guard index.insert(child.name, at: children.count, in: children) == children.count else { return }
        children.append(child)
    }

    mutating func reserveCapacity(_ count: Int) {
        children.reserveCapacity(count)
        index.reserveCapacity(count, children: children)
    }

    public func child(named name: FileName) -> TreeChild? {
        index.position(of: name, in: children).map { children[$0] }
    }

    // The index follows from the children.
    public static func == (lhs: TreeFolder, rhs: TreeFolder) -> Bool {
        lhs.inode == rhs.inode && lhs.parent == rhs.parent && lhs.children == rhs.children
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(inode)
        hasher.combine(parent)
        hasher.combine(children)
    }
}

/// One file of an item in the tree: the media, or a thumbnail or subtitle beside it.
public struct TreeItemFile: Hashable, Sendable {
    public var name: FileName
    /// The cache file key (`media`, `thumbnail`, `subtitle.<lang>`), or `TreeItemFile.joinedKey`.
    public var key: CacheFileKey
    /// A side file's size from the catalog or a HEAD at sync, when known (the media's is the
    /// item's): what the file shows until it is in the cache.
    public var size: UInt64?
    public var isMedia: Bool { key == "media" }
    /// The `.nfo` of policy `sidecars nfo`: made from the catalog, no cache file.
    public static let sidecarKey: CacheFileKey = "nfo"

    public init(name: FileName, key: CacheFileKey, size: UInt64? = nil) {
        self.name = name
        self.key = key
        self.size = size
    }

    /// A fully cached HLS stream as one contiguous `.ts`/`.mp4` file: not a cache file of its
    /// own, but the stream's init segment and segments end to end.
    public static let joinedKey = "hls.joined"
}

/// An item's files, in file-number order: the media, then the files beside it. The media's
/// name is held in place and the rest (rare) in an array, so an item with only its media
/// costs no allocation of its own: a library of 100,000 items keeps one tree in memory, and
/// two while a new one is built.
public struct TreeItemFiles: RandomAccessCollection, Hashable, Sendable {
    private var media: FileName?
    private var others: [TreeItemFile]

    /// `files[0]` must be the media (`key == "media"`) when there are any.
    public init(_ files: [TreeItemFile]) {
        precondition(files.first?.isMedia ?? true, "an item's first file is its media")
        media = files.first?.name
        others = Array(files.dropFirst())
    }

    /// The media alone.
    init(media: FileName) {
        self.media = media
        others = []
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { media == nil ? 0 : 1 + others.count }

    public subscript(position: Int) -> TreeItemFile {
        position == 0 ? TreeItemFile(name: media!, key: "media") : others[position - 1]
    }

    /// The media's name, shared with the tree built before when unchanged (`TreeBuilder`).
    var mediaName: FileName? { media }

    mutating func append(_ file: TreeItemFile) {
        precondition(media != nil, "an item's first file is its media")
        others.append(file)
    }
}

/// What the mount shows of one item.
public struct TreeItem: Hashable, Sendable {
    public var id: Int64
    /// Index = the file number in the inode (`NodeID.itemFile`): 0 is the media.
    public var files: TreeItemFiles
    /// The media size (0 when unknown).
    public var size: UInt64
    /// `publishedAt ?? addedAt`: it never moves with the item's state.
    public var modificationTime: Timestamp
    /// When its licence expires (opens fail with `EKEYEXPIRED` from then), if it does.
    /// (Before the one-byte fields: the item then fits 64 bytes.)
    public var licenceExpiresAt: Date?
    public var state: ItemState
    /// An HLS item: its media file is the local playlist, sized by the file system.
    public var isHLS: Bool
    /// How many folders list it: its files' link count, so `du` counts it once and `cp -a`
    /// and `tar` keep one copy and hard links.
    public var folderCount: UInt16

    /// Whether opens of any of its files are refused with `EKEYEXPIRED` at `now`.
    public func licenceHasExpired(at now: Date) -> Bool {
        licenceExpiresAt.map { $0 <= now } ?? false
    }

    public init(id: Int64, files: [TreeItemFile], size: UInt64, modificationTime: Timestamp, state: ItemState,
                isHLS: Bool = false, licenceExpiresAt: Date? = nil, folderCount: UInt16 = 1) {
        self.init(id: id, files: TreeItemFiles(files), size: size, modificationTime: modificationTime, state: state,
                  isHLS: isHLS, licenceExpiresAt: licenceExpiresAt, folderCount: folderCount)
    }

    init(id: Int64, files: TreeItemFiles, size: UInt64, modificationTime: Timestamp, state: ItemState,
         isHLS: Bool, licenceExpiresAt: Date?, folderCount: UInt16) {
        self.id = id
        self.folderCount = folderCount
        self.files = files
        self.size = size
        self.modificationTime = modificationTime
        self.state = state
        self.isHLS = isHLS
        self.licenceExpiresAt = licenceExpiresAt
    }
}

/// The listed items by id: the items in one array and where each id is in it. A dictionary
/// of whole items kept its buckets at most three-quarters full, each the size of an item.
public struct TreeItems: Sequence, Equatable, Sendable {
    private var rows: [TreeItem] = []
    private var positions: [Int64: Int32] = [:]

    public init() {}

    public var count: Int { rows.count }

    public subscript(id: Int64) -> TreeItem? {
        positions[id].map { rows[Int($0)] }
    }

    /// Adds `item`, or replaces the item with its id.
    mutating func set(_ item: TreeItem) {
        if let position = positions[item.id] {
            rows[Int(position)] = item
        } else {
            positions[item.id] = Int32(rows.count)
            rows.append(item)
        }
    }

    mutating func reserveCapacity(_ count: Int) {
        rows.reserveCapacity(count)
        positions.reserveCapacity(count)
    }

    public func makeIterator() -> IndexingIterator<[TreeItem]> { rows.makeIterator() }

    /// The same items, whatever order they were added in.
    public static func == (lhs: TreeItems, rhs: TreeItems) -> Bool {
        lhs.count == rhs.count && lhs.rows.allSatisfy { rhs[$0.id] == $0 }
    }
}

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
    /// Folders' times: when the mount started.
    public let folderTime: Timestamp
    /// The size of each source's `folder.jpg` (`sidecars nfo`), by source id.
    public let artworks: [Int64: UInt64]

    init(folders: [UInt64: TreeFolder], items: TreeItems, uid: UInt32, gid: UInt32, folderTime: Timestamp,
         artworks: [Int64: UInt64] = [:]) {
        self.artworks = artworks
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
        if case .sourceArtwork(let id)? = NodeID(inode: inode), let size = artworks[id] {
            var attributes = FileAttributes.file(inode: inode, permissions: 0o644, size: size)
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
            // In the `.hls/<id>/` of every folder that lists the item.
            attributes.linkCount = UInt64(max(1, item.folderCount))
            return attributes
        }
        guard let (item, file) = itemFile(inode) else { return nil }
        var attributes = FileAttributes.file(inode: inode, permissions: 0o644, size: file == 0 && !item.isHLS ? item.size : 0)
        attributes.uid = uid
        attributes.gid = gid
        attributes.setTimes(item.modificationTime)
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
            for child in folder.children {
                if child.isDirectory {
                    pending.append(child.inode)
                } else if case .itemFile(let id, 0)? = NodeID(inode: child.inode), seen.insert(id).inserted, let item = items[id] {
                    found.append(item)
                }
            }
        }
        return found
    }

    /// An empty tree (before the first build, or when the store cannot be read).
    public static func empty(uid: UInt32, gid: UInt32, folderTime: Timestamp) -> TreeSnapshot {
        var builder = TreeBuilder(uid: uid, gid: gid, folderTime: folderTime, recentCutoff: .distantFuture)
        return builder.finish()
    }
}
