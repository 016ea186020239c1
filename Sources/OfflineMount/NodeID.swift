import OfflineFUSE

/// The mount's inode numbers: pure functions of store ids, so they are stable across
/// restarts and the same item has one inode in every folder that lists it.
///
/// Layout (64 bits):
/// - 1: the root; 2–5: `sources`, `categories`, `state`, `recent`; 6–15: reserved for the
///   root's hidden files (`HiddenFile`: 6 `.control`, 7 `.status`, 8 `.status.json`, 9 `.events`);
///   16 + n: `state/<n-th state>`.
/// - `1 << 40 | id`: the folder of source `id`; `2 << 40 | id`: the folder of category `id`.
/// - `1 << 56 | id << 8 | k`: file `k` of item `id` (0 the media, 1 the thumbnail, 2… the
///   subtitles in catalog order). Ids are AUTOINCREMENT, never reused, so an inode never
///   names two different things (the generation can stay 0).
///
/// The kernel's lookup counts need no table: any inode can be resolved again from its number
/// and the current tree, so `forget` has nothing to release.
public enum NodeID: Hashable, Sendable {
    case root
    case sources, categories, states, recent
    /// `.control`, `.status`, `.status.json`, `.events` in the root.
    case hidden(HiddenFile)
    /// `state/<name>`, by index in `TreeSnapshot.stateFolders`.
    case stateFolder(Int)
    case source(Int64)
    case category(Int64)
    case itemFile(itemID: Int64, file: Int)

    static let sourceTag: UInt64 = 1 << 40
    static let categoryTag: UInt64 = 2 << 40
    static let itemTag: UInt64 = 1 << 56
    static let idMask: UInt64 = (1 << 40) - 1
    /// Files per item: the media, the thumbnail and up to 254 subtitle tracks.
    public static let filesPerItem = 256

    public var inode: UInt64 {
        switch self {
        case .root: rootInode
        case .sources: 2
        case .categories: 3
        case .states: 4
        case .recent: 5
        case .hidden(let file): file.rawValue
        case .stateFolder(let index): 16 + UInt64(index)
        case .source(let id): Self.sourceTag | (UInt64(bitPattern: id) & Self.idMask)
        case .category(let id): Self.categoryTag | (UInt64(bitPattern: id) & Self.idMask)
        case .itemFile(let itemID, let file):
            Self.itemTag | ((UInt64(bitPattern: itemID) & ((1 << 48) - 1)) << 8) | UInt64(file & 0xff)
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
        case 6..<16:
            guard let file = HiddenFile(rawValue: inode) else { return nil }
            self = .hidden(file)
        case 16..<(16 + UInt64(TreeSnapshot.stateFolders.count)): self = .stateFolder(Int(inode - 16))
        case _ where inode & Self.itemTag != 0:
            self = .itemFile(itemID: Int64((inode & ~Self.itemTag) >> 8), file: Int(inode & 0xff))
        case _ where inode >> 40 == 1: self = .source(Int64(inode & Self.idMask))
        case _ where inode >> 40 == 2: self = .category(Int64(inode & Self.idMask))
        default: return nil
        }
    }
}

/// The root's hidden files (DESIGN §2): the control file and the status files. Not items:
/// served by `ControlFile`, `StatusFiles` and `EventsFile`, never cached by the kernel's page
/// cache (`direct_io`).
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
