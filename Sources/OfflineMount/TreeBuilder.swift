import Foundation
import OfflineFUSE
import OfflineStore

/// Builds a `TreeSnapshot` from store rows: a pure function of its inputs (testable without
/// a kernel), run on the refresher's thread, never on a request.
///
/// Which items are listed: those with a file name (not `metadata-pending`), not `deleted`,
/// and not undownloaded items of an unsubscribed source (DESIGN §2 toggles).
public struct TreeBuilder {
    private var folders: [UInt64: TreeFolder] = [:]
    private var items: [Int64: TreeItem] = [:]
    private let uid: UInt32, gid: UInt32
    private let folderTime: Timestamp
    private let recentCutoff: Date

    /// - Parameter recentCutoff: items cached (downloaded) at or after it are in `recent/`.
    public init(uid: UInt32, gid: UInt32, folderTime: Timestamp, recentCutoff: Date) {
        self.uid = uid
        self.gid = gid
        self.folderTime = folderTime
        self.recentCutoff = recentCutoff
        var root = TreeFolder(inode: NodeID.root.inode, parent: NodeID.root.inode)
        for (name, node) in [("sources", NodeID.sources), ("categories", .categories), ("state", .states), ("recent", .recent)] {
            root.add(TreeChild(name: FileName(name), inode: node.inode, isDirectory: true))
            folders[node.inode] = TreeFolder(inode: node.inode, parent: root.inode)
        }
        for file in HiddenFile.allCases {
            root.add(TreeChild(name: FileName(file.name), inode: file.inode, isDirectory: false))
        }
        folders[root.inode] = root
        for (index, state) in TreeSnapshot.stateFolders.enumerated() {
            let inode = NodeID.stateFolder(index).inode
            folders[NodeID.states.inode]!.add(TreeChild(name: FileName(state.rawValue), inode: inode, isDirectory: true))
            folders[inode] = TreeFolder(inode: inode, parent: NodeID.states.inode)
        }
    }

    /// Builds the whole tree from the store's rows.
    /// - Parameter joinedExtensions: for fully cached HLS items that can be one file, its
    ///   extension (`ts`, `mp4`): the file is listed beside the playlist.
    public static func build(sources: [Source], categories: [Category], items: [ItemListing],
                             uid: UInt32, gid: UInt32, folderTime: Timestamp, recentCutoff: Date,
                             joinedExtensions: [Int64: String] = [:], licenceExpiries: [Int64: Date] = [:]) -> TreeSnapshot {
        var builder = TreeBuilder(uid: uid, gid: gid, folderTime: folderTime, recentCutoff: recentCutoff)
        builder.addSources(sources)
        let categoryIDs = builder.addCategories(categories)
        let unsubscribed = Set(sources.filter { !$0.subscribed }.map(\.name))
        for listing in items {
            let item = listing.item
            if unsubscribed.contains(listing.sourceName) && item.state == .discovered && item.bytesPresent == 0 { continue }
            builder.addItem(listing, categoryIDs: categoryIDs, joinedExtension: joinedExtensions[item.id],
                            licenceExpiresAt: licenceExpiries[item.id])
        }
        return builder.finish()
    }

    mutating func addSources(_ sources: [Source]) {
        for source in sources.sorted(by: { $0.name < $1.name }) {
            let inode = NodeID.source(source.id).inode
            folders[NodeID.sources.inode]!.add(TreeChild(name: FileName(source.name), inode: inode, isDirectory: true))
            folders[inode] = TreeFolder(inode: inode, parent: NodeID.sources.inode)
        }
    }

    /// Adds category folders (parents before children: `categories` is ordered by path).
    /// Returns name path → folder inode.
    mutating func addCategories(_ categories: [Category]) -> [[String]: UInt64] {
        var byID: [Int64: UInt64] = [:]
        var byPath: [[String]: UInt64] = [:]
        for category in categories.sorted(by: { $0.path.count < $1.path.count }) {
            let parent = category.parentID.map { byID[$0] } ?? NodeID.categories.inode
            guard let parent else { continue }  // an orphan cannot be stored; skip it anyway
            let inode = NodeID.category(category.id).inode
            folders[parent]!.add(TreeChild(name: FileName(category.folderName), inode: inode, isDirectory: true))
            folders[inode] = TreeFolder(inode: inode, parent: parent)
            byID[category.id] = inode
            byPath[category.path] = inode
        }
        return byPath
    }

    mutating func addItem(_ listing: ItemListing, categoryIDs: [[String]: UInt64], joinedExtension: String? = nil,
                          licenceExpiresAt: Date? = nil) {
        let item = listing.item
        guard let fileName = item.fileName, !fileName.isEmpty, item.state != .deleted else { return }
        var files = Self.files(of: item, fileName: fileName)
        let isHLS = item.type == .hls && item.id <= NodeID.maxHLSItemID
        if isHLS, item.state == .cached, let joinedExtension {
            let stem = fileName.lastIndex(of: ".").map { String(fileName[..<$0]) } ?? fileName
            let name = "\(stem).\(joinedExtension)"
            if name.utf8.count <= FileNaming.maxBytes, files.count < NodeID.filesPerItem {
                files.append(TreeItemFile(name: FileName(name), key: TreeItemFile.joinedKey))
            }
        }
        let time = item.downloadedAt ?? item.publishedAt ?? item.addedAt
        items[item.id] = TreeItem(id: item.id, files: files, size: UInt64(max(0, item.size ?? 0)),
                                  modificationTime: Timestamp(time), state: item.state, isHLS: isHLS,
                                  licenceExpiresAt: licenceExpiresAt)

        var places: [UInt64] = []
        if let source = folders[NodeID.sources.inode]!.child(named: FileName(listing.sourceName)) { places.append(source.inode) }
        places += listing.categoryPaths.compactMap { categoryIDs[$0] }
        if let index = TreeSnapshot.stateFolders.firstIndex(of: item.state) { places.append(NodeID.stateFolder(index).inode) }
        if item.state == .cached, let downloaded = item.downloadedAt, downloaded >= recentCutoff {
            places.append(NodeID.recent.inode)
        }
        for place in places {
            for (number, file) in files.enumerated() {
                folders[place]?.add(TreeChild(name: file.name, inode: NodeID.itemFile(itemID: item.id, file: number).inode,
                                              isDirectory: false))
            }
            if isHLS { addHLSFolder(in: place, itemID: item.id) }
        }
    }

    /// `<place>/.hls/<item id>/`, where the item's playlist finds its segments (DESIGN §3).
    /// Its files come from the item's stream, not the tree.
    private mutating func addHLSFolder(in place: UInt64, itemID: Int64) {
        guard let parent = HLSParent(folder: place), folders[place] != nil else { return }
        let hls = NodeID.hlsFolder(parent).inode
        if folders[hls] == nil {
            folders[hls] = TreeFolder(inode: hls, parent: place)
            folders[place]!.add(TreeChild(name: FileName(".hls"), inode: hls, isDirectory: true))
        }
        let itemFolder = NodeID.hlsItemFolder(parent, itemID: itemID).inode
        folders[itemFolder] = TreeFolder(inode: itemFolder, parent: hls)
        folders[hls]!.add(TreeChild(name: FileName(String(itemID)), inode: itemFolder, isDirectory: true))
    }

    /// The media file, then `<stem>-thumb.jpg` and `<stem>.<lang>.<vtt|srt>` when the catalog
    /// has them. A side file whose name would pass 255 bytes or whose language tag is not a
    /// plain tag is left out (feeds are untrusted: the tag becomes part of a name).
    public static func files(of item: Item, fileName: String) -> [TreeItemFile] {
        var files = [TreeItemFile(name: FileName(fileName), key: "media")]
        let stem = fileName.lastIndex(of: ".").map { String(fileName[..<$0]) } ?? fileName
        func add(_ name: String, key: String) {
            guard name.utf8.count <= FileNaming.maxBytes, files.count < NodeID.filesPerItem else { return }
            files.append(TreeItemFile(name: FileName(name), key: key))
        }
        if item.thumbnailURL != nil { add(stem + "-thumb.jpg", key: "thumbnail") }
        var languages = Set<String>()
        for track in item.subtitles {
            let language = track.language
            guard (1...35).contains(language.utf8.count),
                  language.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || ($0 < 0x80 && isalnum(Int32($0)) != 0) }),
                  languages.insert(language).inserted else { continue }
            let format = (track.format?.lowercased()).flatMap { ["vtt", "srt"].contains($0) ? $0 : nil }
                ?? (track.url.lowercased().hasSuffix(".srt") ? "srt" : "vtt")
            add("\(stem).\(language).\(format)", key: "subtitle.\(language)")
        }
        return files
    }

    mutating func finish() -> TreeSnapshot {
        TreeSnapshot(folders: folders, items: items, uid: uid, gid: gid, folderTime: folderTime)
    }
}

extension Timestamp {
    init(_ date: Date) {
        let interval = date.timeIntervalSince1970
        let seconds = interval.rounded(.down)
        self.init(seconds: Int(seconds), nanoseconds: Int(((interval - seconds) * 1e9).rounded(.down)))
    }
}
