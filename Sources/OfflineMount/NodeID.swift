import OfflineFUSE

/// The mount's inode numbers: pure functions of store ids, so they are stable across
/// restarts and the same item has one inode in every folder that lists it.
///
/// Layout (64 bits):
/// - 1: the root; 2–5: `sources`, `categories`, `state`, `recent`; 6–9: the root's hidden
///   files (`HiddenFile`: 6 `.control`, 7 `.status`, 8 `.status.json`, 9 `.events`); 10:
///   `unwatched`; 11–15: reserved;
///   16 + n: `state/<n-th state>`.
/// - `1 << 40 | id`: the folder of source `id`; `2 << 40 | id`: the folder of category `id`.
/// - `1 << 56 | id << 8 | k`: file `k` of item `id` (0 the media, 1 the thumbnail, 2… the
///   subtitles in catalog order). Ids are AUTOINCREMENT, never reused, so an inode never
///   names two different things (the generation can stay 0).
/// - HLS (DESIGN §3), where `p` is the 24-bit `HLSParent` code of the folder holding the items:
///   `2 << 56 | p`: that folder's `.hls`; `3 << 56 | p << 32 | id`: its `.hls/<id>`;
///   `4 << 56 | id << 24 | n`: part `n` of item `id`'s stream (the same file from every
///   folder). A directory can have one parent only in the kernel's cache, hence a `.hls` and
///   `.hls/<id>` per folder; item ids past 2³² and folders past 2²² get no `.hls`.
/// - `5 << 56 | id`: `sources/<source id>/folder.jpg`, the feed's artwork (`sidecars nfo`).
///
/// The kernel's lookup counts need no table: any inode can be resolved again from its number
/// and the current tree, so `forget` has nothing to release.
public enum NodeID: Hashable, Sendable {
    case root
    case sources, categories, states, recent, unwatched
    /// `.control`, `.status`, `.status.json`, `.events` in the root.
    case hidden(HiddenFile)
    /// `state/<name>`, by index in `TreeSnapshot.stateFolders`.
    case stateFolder(Int)
    case source(Int64)
    case category(Int64)
    case itemFile(itemID: Int64, file: Int)
    /// `<folder>/.hls`.
    case hlsFolder(HLSParent)
    /// `<folder>/.hls/<item id>`.
    case hlsItemFolder(HLSParent, itemID: Int64)
    /// `.hls/<item id>/<part>`: part `part` of the item's chosen HLS rendition.
    case hlsPart(itemID: Int64, part: Int)
    /// `sources/<source>/folder.jpg`: the feed's artwork.
    case sourceArtwork(Int64)

    static let sourceTag: UInt64 = 1 << 40
    static let categoryTag: UInt64 = 2 << 40
    static let itemTag: UInt64 = 1 << 56
    static let idMask: UInt64 = (1 << 40) - 1
    static let hlsFolderTag: UInt64 = 2 << 56
    static let hlsItemFolderTag: UInt64 = 3 << 56
    static let hlsPartTag: UInt64 = 4 << 56
    static let artworkTag: UInt64 = 5 << 56
    /// The largest item id with a `.hls` folder, and the most parts a stream shows.
    public static let maxHLSItemID: Int64 = (1 << 32) - 1
    public static let maxHLSParts = 1 << 24
    /// Files per item: the media, the thumbnail and up to 254 subtitle tracks.
    public static let filesPerItem = 256

    public var inode: UInt64 {
        switch self {
        case .root: rootInode
        case .sources: 2
        case .categories: 3
        case .states: 4
        case .recent: 5
        case .unwatched: 10
        case .hidden(let file): file.rawValue
        case .stateFolder(let index): 16 + UInt64(index)
        case .source(let id): Self.sourceTag | (UInt64(bitPattern: id) & Self.idMask)
        case .category(let id): Self.categoryTag | (UInt64(bitPattern: id) & Self.idMask)
        case .itemFile(let itemID, let file):
            Self.itemTag | ((UInt64(bitPattern: itemID) & ((1 << 48) - 1)) << 8) | UInt64(file & 0xff)
        case .hlsFolder(let parent): Self.hlsFolderTag | UInt64(parent.code)
        case .hlsItemFolder(let parent, let itemID):
            Self.hlsItemFolderTag | UInt64(parent.code) << 32 | (UInt64(bitPattern: itemID) & 0xffff_ffff)
        case .hlsPart(let itemID, let part):
            Self.hlsPartTag | (UInt64(bitPattern: itemID) & 0xffff_ffff) << 24 | UInt64(part & 0xff_ffff)
        case .sourceArtwork(let id): Self.artworkTag | (UInt64(bitPattern: id) & Self.idMask)
        }
    }

    /// The node an inode number names, or `nil` for a number this layout never gives.
    public init?(inode: UInt64) {
        switch inode {
        case rootInode: self = .root
        case 2: self = .sources
        case 3: self = .categories
        case 4: self = .states
        case 5: self = .recent
        case 10: self = .unwatched
        case 6..<16:
            guard let file = HiddenFile(rawValue: inode) else { return nil }
            self = .hidden(file)
        case 16..<(16 + UInt64(TreeSnapshot.stateFolders.count)): self = .stateFolder(Int(inode - 16))
        case _ where inode >> 56 == 2:
            guard let parent = HLSParent(code: UInt32(inode & 0xff_ffff)) else { return nil }
            self = .hlsFolder(parent)
        case _ where inode >> 56 == 3:
            guard let parent = HLSParent(code: UInt32((inode >> 32) & 0xff_ffff)) else { return nil }
            self = .hlsItemFolder(parent, itemID: Int64(inode & 0xffff_ffff))
        case _ where inode >> 56 == 4:
            self = .hlsPart(itemID: Int64((inode >> 24) & 0xffff_ffff), part: Int(inode & 0xff_ffff))
        case _ where inode >> 56 == 5: self = .sourceArtwork(Int64(inode & Self.idMask))
        case _ where inode >> 56 == 1:
            self = .itemFile(itemID: Int64((inode & ~Self.itemTag) >> 8), file: Int(inode & 0xff))
        case _ where inode >> 40 == 1: self = .source(Int64(inode & Self.idMask))
        case _ where inode >> 40 == 2: self = .category(Int64(inode & Self.idMask))
        default: return nil
        }
    }
}

/// A folder that can hold HLS items, as the 24-bit code in its `.hls` inodes: a source or
/// category folder (ids below 2²²), a `state/` folder, `recent/` or `unwatched/`.
public enum HLSParent: Hashable, Sendable {
    case source(Int64)
    case category(Int64)
    case stateFolder(Int)
    case recent
    case unwatched

    static let idLimit: Int64 = 1 << 22

    /// The parent for a folder inode, or nil when it cannot hold a `.hls` (an id too large).
    init?(folder: UInt64) {
        switch NodeID(inode: folder) {
        case .source(let id)? where id < Self.idLimit: self = .source(id)
        case .category(let id)? where id < Self.idLimit: self = .category(id)
        case .stateFolder(let index)?: self = .stateFolder(index)
        case .recent?: self = .recent
        case .unwatched?: self = .unwatched
        default: return nil
        }
    }

    init?(code: UInt32) {
        let id = Int64(code & 0x3f_ffff)
        switch code >> 22 {
        case 1: self = .source(id)
        case 2: self = .category(id)
        case 3:
            switch id {
            case 0x3f_ffff: self = .recent
            case 0x3f_fffe: self = .unwatched
            default: self = .stateFolder(Int(id))
            }
        default: return nil
        }
    }

    var code: UInt32 {
        switch self {
        case .source(let id): 1 << 22 | UInt32(id)
        case .category(let id): 2 << 22 | UInt32(id)
        case .stateFolder(let index): 3 << 22 | UInt32(index)
        case .recent: 3 << 22 | 0x3f_ffff
        case .unwatched: 3 << 22 | 0x3f_fffe
        }
    }
}

/// The root's hidden files (DESIGN §2): the control file and the status files. Not items:
/// served by `ControlFile`, `StatusSnapshots` and `EventsFile`, never cached by the kernel's
/// page cache (`direct_io`).
public enum HiddenFile: UInt64, CaseIterable, Hashable, Sendable {
    case control = 6
    case status = 7
    case statusJSON = 8
    case events = 9

    public var name: String {
        switch self {
        case .control: ".control"
        case .status: ".status"
        case .statusJSON: ".status.json"
        case .events: ".events"
        }
    }

    public var inode: UInt64 { rawValue }
}
