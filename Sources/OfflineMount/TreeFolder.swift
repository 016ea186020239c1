public import OfflineFUSE

/// One name in a folder of the tree.
public struct TreeChild: Hashable, Sendable {
    public var name: FileName
    public var inode: UInt64
    public var isDirectory: Bool
}

/// A folder's children in listing order: entries of the tree's `NameTable`, each made a
/// `TreeChild` when read.
public struct TreeChildren: RandomAccessCollection, Equatable, Sendable {
    fileprivate var entries: [NameTable.Entry] = []
    fileprivate var names = NameTable()

    public var startIndex: Int { 0 }
    public var endIndex: Int { entries.count }
    public subscript(position: Int) -> TreeChild { names.child(entries[position]) }

    /// A child's inode and kind, without making its name.
    func node(at position: Int) -> (inode: UInt64, isDirectory: Bool) {
        (names.inode(entries[position]), names.isDirectory(entries[position]))
    }

    public static func == (lhs: TreeChildren, rhs: TreeChildren) -> Bool {
        lhs.entries.count == rhs.entries.count
            && lhs.entries.indices.allSatisfy { lhs.names.same(lhs.entries[$0], as: rhs.entries[$0], in: rhs.names) }
    }
}

/// A folder: its children in listing order and an index by name for `lookup`.
public struct TreeFolder: Equatable, Sendable {
    public var inode: UInt64
    public var parent: UInt64
    public private(set) var children = TreeChildren()
    /// Children that are folders: a folder's link count is two more (`..` of each, and `.`).
    public private(set) var subfolderCount = 0
    // The index follows from the children.
    private var index = SlotTable()

    init(inode: UInt64, parent: UInt64) {
        self.inode = inode
        self.parent = parent
    }

    /// Adds `child` unless the name is taken (the first one wins: folders, then media files,
    /// then side files, so a crafted title can never hide another item).
    mutating func add(_ child: TreeChild) {
        guard self.child(named: child.name) == nil else { return }
        let entry = children.names.append(child.name.bytes, inode: child.inode, isDirectory: child.isDirectory)
        add(entry, hash: child.name.hashValue, in: children.names)
    }

    /// Adds `entry` of the tree's `names` (`TreeBuilder`, which hands the table over in
    /// `share(_:)`) unless its name is taken.
    mutating func add(_ entry: NameTable.Entry, hash: Int, in names: NameTable) {
        let taken = index.insert(entry, hash: hash, matches: { names.same($0, as: entry, in: names, namesOnly: true) },
                                 rehash: { names.hash($0) })
        guard taken == nil else { return }
        children.entries.append(entry)
        if names.isDirectory(entry) { subfolderCount += 1 }
    }

    /// Makes `names` the table the folder's entries are read from.
    mutating func share(_ names: NameTable) { children.names = names }

    mutating func reserveCapacity(_ count: Int, in names: NameTable) {
        children.entries.reserveCapacity(count)
        index.reserveCapacity(count, rehash: { names.hash($0) })
    }

    public func child(named name: FileName) -> TreeChild? {
        let names = children.names
        return index.find(hash: name.hashValue, matches: { names.name($0, is: name) }).map {
            TreeChild(name: name, inode: names.inode($0), isDirectory: names.isDirectory($0))
        }
    }

    public static func == (lhs: TreeFolder, rhs: TreeFolder) -> Bool {
        lhs.inode == rhs.inode && lhs.parent == rhs.parent && lhs.children == rhs.children
    }
}
