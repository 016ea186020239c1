public import Foundation
public import OfflineEngine
public import OfflineFUSE

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

/// An item's files, in file-number order: the media, then the files beside it. Their names
/// are entries of the tree's `NameTable`, one after the other; only the side files' keys and
/// sizes are kept here, so an item with only its media costs no allocation of its own.
public struct TreeItemFiles: RandomAccessCollection, Equatable, Sendable {
    struct SideFile: Equatable, Sendable {
        var key: CacheFileKey
        var size: UInt64?
    }

    private let names: NameTable
    /// The media's entry (nil: no files); the side files' follow it.
    private let media: NameTable.Entry?
    private let sides: [SideFile]

    /// `files[0]` must be the media (`key == "media"`) when there are any.
    public init(_ files: [TreeItemFile]) {
        precondition(files.first?.isMedia ?? true, "an item's first file is its media")
        var names = NameTable()
        let entries = files.map { names.append($0.name.bytes, inode: 0, isDirectory: false) }
        self.init(names: names, media: entries.first, sides: files.dropFirst().map { SideFile(key: $0.key, size: $0.size) })
    }

    init(names: NameTable, media: NameTable.Entry?, sides: [SideFile]) {
        self.names = names
        self.media = media
        self.sides = sides
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { media == nil ? 0 : 1 + sides.count }

    public subscript(position: Int) -> TreeItemFile {
        TreeItemFile(name: names.name(entry(position)), key: key(position), size: position == 0 ? nil : sides[position - 1].size)
    }

    /// File `position`'s key, without making its name.
    public func key(_ position: Int) -> CacheFileKey { position == 0 ? "media" : sides[position - 1].key }

    private func entry(_ position: Int) -> NameTable.Entry {
        (0..<position).reduce(media!) { entry, _ in names.entry(after: entry) }
    }

    public static func == (lhs: TreeItemFiles, rhs: TreeItemFiles) -> Bool {
        lhs.count == rhs.count && lhs.sides == rhs.sides
            && lhs.indices.allSatisfy { lhs.names.same(lhs.entry($0), as: rhs.entry($0), in: rhs.names, namesOnly: true) }
    }
}

/// What the mount shows of one item.
public struct TreeItem: Equatable, Sendable {
    public var id: Int64
    /// Index = the file number in the inode (`NodeID.itemFile`): 0 is the media.
    public var files: TreeItemFiles
    /// The media size (0 when unknown).
    public var size: UInt64
    /// The media file's time (`ItemOutline.mediaTime`): it never moves with the item's state.
    public var modificationTime: Timestamp
    /// The side files' time (`ItemOutline.sidesTime`), to the second.
    public var sidesModificationTime: Timestamp
    /// When its licence expires (opens fail with `EKEYEXPIRED` from then), if it does.
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
        self.init(id: id, files: TreeItemFiles(files), size: size, modificationTime: modificationTime,
                  sidesModificationTime: modificationTime, state: state, isHLS: isHLS, licenceExpiresAt: licenceExpiresAt,
                  folderCount: folderCount)
    }

    init(id: Int64, files: TreeItemFiles, size: UInt64, modificationTime: Timestamp, sidesModificationTime: Timestamp,
         state: ItemState, isHLS: Bool, licenceExpiresAt: Date?, folderCount: UInt16) {
        self.id = id
        self.folderCount = folderCount
        self.files = files
        self.size = size
        self.modificationTime = modificationTime
        self.sidesModificationTime = sidesModificationTime
        self.state = state
        self.isHLS = isHLS
        self.licenceExpiresAt = licenceExpiresAt
    }
}

/// The listed items by id: rows in one array and a `SlotTable` of where each id is in it.
/// A row is a `TreeItem` without what most items share or lack (the name table, a licence
/// expiry) in 48 bytes: a library keeps one row an item, two while a new tree is built.
public struct TreeItems: Sequence, Equatable, Sendable {
    struct Row: Sendable {
        var id: Int64
        var size: UInt64
        var seconds: Int64
        var nanoseconds: UInt32
        var media: NameTable.Entry
        var sides: [TreeItemFiles.SideFile]
        var state: ItemState
        var isHLS: Bool
        var folderCount: UInt16
        /// Seconds the side files' time follows the media's (last: in what was the padding).
        var sidesLater: UInt32
    }

    private var rows: [Row] = []
    private var positions = SlotTable()
    private var expiries: [Int64: Date] = [:]
    /// The tree's names (`share(_:)`), which the rows' `media` are entries of.
    private(set) var names = NameTable()

    public init() {}

    public var count: Int { rows.count }

    public subscript(id: Int64) -> TreeItem? {
        position(of: id).map { item(rows[Int($0)]) }
    }

    /// Adds `row`, or replaces the row with its id.
    mutating func set(_ row: Row, licenceExpiresAt: Date?) {
        let existing: UInt32?
        do {
            // A copy for the closures, gone before the append (which would copy the rows else).
            let rows = rows
            existing = positions.insert(UInt32(rows.count), hash: Self.hash(row.id), matches: { rows[Int($0)].id == row.id },
                                        rehash: { Self.hash(rows[Int($0)].id) })
        }
        if let existing { rows[Int(existing)] = row } else { rows.append(row) }
        if licenceExpiresAt != nil || !expiries.isEmpty { expiries[row.id] = licenceExpiresAt }
    }

    mutating func share(_ names: NameTable) { self.names = names }

    mutating func reserveCapacity(_ count: Int) {
        rows.reserveCapacity(count)
        positions.reserveCapacity(count, rehash: { [rows] in Self.hash(rows[Int($0)].id) })
    }

    public func makeIterator() -> some IteratorProtocol<TreeItem> { rows.lazy.map(item).makeIterator() }

    /// The same items, whatever order they were added in.
    public static func == (lhs: TreeItems, rhs: TreeItems) -> Bool {
        lhs.count == rhs.count && lhs.allSatisfy { rhs[$0.id] == $0 }
    }

    private func position(of id: Int64) -> UInt32? {
        positions.find(hash: Self.hash(id), matches: { rows[Int($0)].id == id })
    }

    private func item(_ row: Row) -> TreeItem {
        let time = Timestamp(seconds: Int(row.seconds), nanoseconds: Int(row.nanoseconds))
        return TreeItem(id: row.id, files: TreeItemFiles(names: names, media: row.media, sides: row.sides), size: row.size,
                        modificationTime: time,
                        sidesModificationTime: row.sidesLater == 0 ? time : Timestamp(seconds: Int(row.seconds) + Int(row.sidesLater)),
                        state: row.state, isHLS: row.isHLS, licenceExpiresAt: expiries.isEmpty ? nil : expiries[row.id],
                        folderCount: row.folderCount)
    }

    /// Ids are mostly consecutive: a multiplicative hash spreads them over the table.
    private static func hash(_ id: Int64) -> Int {
        Int(truncatingIfNeeded: (UInt64(bitPattern: id) &* 0x9E37_79B9_7F4A_7C15) >> 32)
    }
}
