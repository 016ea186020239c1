public import Foundation
public import OfflineEngine
public import OfflineFUSE

/// Builds a `TreeSnapshot` from the library's rows: a pure function of its inputs (testable
/// without a kernel), run on the refresher's thread, never on a request.
///
/// Which items are listed: those with a file name (not `metadata-pending`), not `deleted`,
/// and not undownloaded items of an unsubscribed source (DESIGN §2 toggles).
///
/// A mount waits for the first build before it serves, so the per-item work is kept small:
/// folders are found by position (`slot`), not by inode or name, while building.
public struct TreeBuilder {
    /// Every folder, by slot; `slots` gives the slot of an inode.
    private var folders: [TreeFolder] = []
    private var slots: [UInt64: Int] = [:]
    private var sourceSlots: [Int64: Int] = [:]
    private var categorySlots: [Int64: Int] = [:]
    /// Slots of `state/<name>`, in `TreeSnapshot.stateFolders` order.
    private var stateSlots: [Int] = []
    private var recentSlot = 0
    private var artworks: [Int64: TreeSnapshot.SourceArtwork] = [:]
    private var artworkTimes: [Int64: Timestamp] = [:]
    private var unwatchedSlot = 0
    private var items = TreeItems()
    /// Every name of the tree, which the folders and items refer to: given to them in `finish()`.
    private var names = NameTable()
    private let uid: UInt32, gid: UInt32
    private let folderTime: Timestamp
    private let recentCutoff: Date

    /// - Parameter recentCutoff: items cached (downloaded) at or after it are in `recent/`.
    public init(uid: UInt32, gid: UInt32, folderTime: Timestamp, recentCutoff: Date) {
        self.uid = uid
        self.gid = gid
        self.folderTime = folderTime
        self.recentCutoff = recentCutoff
        let root = addFolder(NodeID.root.inode, parent: NodeID.root.inode)
        for (name, node) in [("sources", NodeID.sources), ("categories", .categories), ("state", .states), ("recent", .recent),
                             ("unwatched", .unwatched)] {
            add(FileName(name), inode: node.inode, isDirectory: true, to: root)
            let slot = addFolder(node.inode, parent: NodeID.root.inode)
            if node == .recent { recentSlot = slot }
            if node == .unwatched { unwatchedSlot = slot }
        }
        for file in HiddenFile.allCases {
            add(FileName(file.name), inode: file.inode, isDirectory: false, to: root)
        }
        let states = slots[NodeID.states.inode]!
        for (index, state) in TreeSnapshot.stateFolders.enumerated() {
            let inode = NodeID.stateFolder(index).inode
            add(FileName(state.rawValue), inode: inode, isDirectory: true, to: states)
            stateSlots.append(addFolder(inode, parent: NodeID.states.inode))
        }
    }

    /// Builds the whole tree from the library's rows (`LibraryView.itemOutlines()`).
    /// - Parameters:
    ///   - joinedExtensions: for fully cached HLS items that can be one file, its extension
    ///     (`ts`, `mp4`): the file is listed beside the playlist.
    public static func build(sources: [Source], categories: [Category], items: [ItemOutline],
                             uid: UInt32, gid: UInt32, folderTime: Timestamp, recentCutoff: Date,
                             joinedExtensions: [Int64: String] = [:], licenceExpiries: [Int64: Date] = [:],
                             sidecarSizes: [Int64: UInt64] = [:], artworkSizes: [Int64: UInt64] = [:]) -> TreeSnapshot {
        var builder = TreeBuilder(uid: uid, gid: gid, folderTime: folderTime, recentCutoff: recentCutoff)
        builder.addSources(sources)
        builder.addArtworks(artworkSizes)
        builder.addCategories(categories)
        builder.reserve(for: items)
        builder.addRows({ add in items.forEach(add) }, subscribed: sources, joinedExtensions: joinedExtensions,
                        licenceExpiries: licenceExpiries, sidecarSizes: sidecarSizes)
        return builder.finish()
    }

    /// Builds a tree that replaces `previous` from rows handed over one at a time, none kept
    /// (`LibraryView.forEachItemOutline`): `rows` calls `add` with each, in listing order.
    /// Folders are sized as in `previous`, which a rebuild rarely changes much; a first build
    /// does better from all the rows at once (sized exactly, and no old tree is held then).
    public static func build(sources: [Source], categories: [Category],
                             rows: (_ add: (ItemOutline) -> Void) throws -> Void,
                             uid: UInt32, gid: UInt32, folderTime: Timestamp, recentCutoff: Date,
                             joinedExtensions: [Int64: String] = [:], licenceExpiries: [Int64: Date] = [:],
                             sidecarSizes: [Int64: UInt64] = [:], artworkSizes: [Int64: UInt64] = [:],
                             previous: TreeSnapshot) rethrows -> TreeSnapshot {
        var builder = TreeBuilder(uid: uid, gid: gid, folderTime: folderTime, recentCutoff: recentCutoff)
        builder.addSources(sources)
        builder.addArtworks(artworkSizes)
        builder.addCategories(categories)
        builder.reserve(like: previous)
        try builder.addRows(rows, subscribed: sources, joinedExtensions: joinedExtensions, licenceExpiries: licenceExpiries,
                            sidecarSizes: sidecarSizes)
        return builder.finish()
    }

    private mutating func addRows(_ rows: (_ add: (ItemOutline) -> Void) throws -> Void, subscribed sources: [Source],
                                  joinedExtensions: [Int64: String], licenceExpiries: [Int64: Date],
                                  sidecarSizes: [Int64: UInt64]) rethrows {
        let unsubscribed = Set(sources.filter { !$0.subscribed }.map(\.id))
        try rows { item in
            if item.state == .discovered && item.bytesPresent == 0 && unsubscribed.contains(item.sourceID) { return }
            // Most libraries have neither: skip the look-ups then.
            let joined = item.type == .hls && item.state == .cached ? joinedExtensions[item.id] : nil
            let expiry = licenceExpiries.isEmpty ? nil : licenceExpiries[item.id]
            addItem(item, joinedExtension: joined, licenceExpiresAt: expiry,
                    nfoSize: sidecarSizes.isEmpty ? nil : sidecarSizes[item.id])
        }
    }

    /// Lists a name in the folder at `slot` unless the name is taken there.
    private mutating func add(_ name: FileName, inode: UInt64, isDirectory: Bool, to slot: Int) {
        let entry = names.append(name.bytes, inode: inode, isDirectory: isDirectory)
        folders[slot].add(entry, hash: name.hashValue, in: names)
    }

    private mutating func addFolder(_ inode: UInt64, parent: UInt64) -> Int {
        slots[inode] = folders.count
        folders.append(TreeFolder(inode: inode, parent: parent))
        return folders.count - 1
    }

    mutating func addSources(_ sources: [Source]) {
        let parent = slots[NodeID.sources.inode]!
        for source in sources.sorted(by: { $0.name < $1.name }) {
            let inode = NodeID.source(source.id).inode
            add(FileName(source.name), inode: inode, isDirectory: true, to: parent)
            sourceSlots[source.id] = addFolder(inode, parent: NodeID.sources.inode)
            artworkTimes[source.id] = Timestamp(source.imageChangedAt ?? source.addedAt)
        }
    }

    /// Adds category folders (parents before children: `categories` is ordered by path).
    mutating func addCategories(_ categories: [Category]) {
        for category in categories.sorted(by: { $0.path.count < $1.path.count }) {
            let parent = category.parentID.map { categorySlots[$0] } ?? slots[NodeID.categories.inode]
            guard let parent else { continue }  // an orphan cannot be stored; skip it anyway
            let inode = NodeID.category(category.id).inode
            add(FileName(category.folderName), inode: inode, isDirectory: true, to: parent)
            categorySlots[category.id] = addFolder(inode, parent: folders[parent].inode)
        }
    }

    /// Sizes the item table and the source, category and state folders once, instead of
    /// growing them (and rehashing their names) item by item.
    private mutating func reserve(for items: [ItemOutline]) {
        self.items.reserveCapacity(items.count)
        var counts = [Int](repeating: 0, count: folders.count)
        var nameBytes = 0
        for item in items {
            // At most this many names: the joined HLS file, or a dropped side file, is rare.
            let files = 1 + (item.hasThumbnail ? 1 : 0) + item.subtitles.count
            // A side file's name is the media's stem and a few bytes more.
            let length = item.fileName.utf8.count
            nameBytes += NameTable.size(ofName: length) + (files - 1) * NameTable.size(ofName: length + 8)
            if let slot = sourceSlots[item.sourceID] { counts[slot] += files }
            for category in item.categoryIDs {
                if let slot = categorySlots[category] { counts[slot] += files }
            }
            if let index = TreeSnapshot.stateFolders.firstIndex(of: item.state) { counts[stateSlots[index]] += files }
        }
        // A little more for the names of `.hls` folders, rather than a table grown to twice.
        names.reserveCapacity(names.bytes.count + nameBytes + nameBytes / 64 + 4096)
        for (slot, count) in counts.enumerated() where count > 0 {
            folders[slot].reserveCapacity(folders[slot].children.count + count, in: names)
        }
    }

    /// Sizes the item table and every folder as they were in the tree before (the usual
    /// rebuild changes a few items), instead of growing them item by item. Growing the item
    /// table costs a copy of it, and the build happens while the old tree is still held.
    private mutating func reserve(like previous: TreeSnapshot) {
        items.reserveCapacity(previous.items.count)
        names.reserveCapacity(previous.items.names.bytes.count + previous.items.names.bytes.count / 64 + 4096)
        for slot in folders.indices {
            if let count = previous.folders[folders[slot].inode]?.children.count, count > folders[slot].children.count {
                folders[slot].reserveCapacity(count, in: names)
            }
        }
    }

    mutating func addItem(_ item: ItemOutline, joinedExtension: String? = nil, licenceExpiresAt: Date? = nil,
                          nfoSize: UInt64? = nil) {
        guard !item.fileName.isEmpty, item.state != .deleted else { return }
        // The item's names go into the table one after the other: the media's, then the side files'.
        func inode(_ file: Int) -> UInt64 { NodeID.itemFile(itemID: item.id, file: file).inode }
        let media: NameTable.Entry
        var sides: [TreeItemFiles.SideFile] = []
        if item.hasThumbnail || !item.subtitles.isEmpty || nfoSize != nil {
            let files = Self.files(fileName: item.fileName, hasThumbnail: item.hasThumbnail, thumbnailSize: item.thumbnailSize,
                                   subtitles: item.subtitles, nfoSize: nfoSize)
            media = names.append(files[0].name.bytes, inode: inode(0), isDirectory: false)
            for (number, file) in files.enumerated().dropFirst() {
                _ = names.append(file.name.bytes, inode: inode(number), isDirectory: false)
                sides.append(TreeItemFiles.SideFile(key: file.key, size: file.size))
            }
        } else {
            media = names.append(item.fileName.utf8, inode: inode(0), isDirectory: false)
        }
        let isHLS = item.type == .hls && item.id <= NodeID.maxHLSItemID
        if isHLS, item.state == .cached, let joinedExtension {
            let name = "\(Self.stem(of: item.fileName)).\(joinedExtension)"
            if name.utf8.count <= Self.maxNameBytes, 1 + sides.count < NodeID.filesPerItem {
                _ = names.append(name.utf8, inode: inode(1 + sides.count), isDirectory: false)
                sides.append(TreeItemFiles.SideFile(key: TreeItemFile.joinedKey))
            }
        }
        var slots: [Int] = []
        // An item named by its content id has no place in its source's folder (it was never
        // in the catalog): `state/failed/` only.
        if !item.namedByContentID, let slot = sourceSlots[item.sourceID] { slots.append(slot) }
        for category in item.categoryIDs {
            if let slot = categorySlots[category] { slots.append(slot) }
        }
        if let index = TreeSnapshot.stateFolders.firstIndex(of: item.state) { slots.append(stateSlots[index]) }
        if item.state == .cached, let downloaded = item.downloadedAt, downloaded >= recentCutoff { slots.append(recentSlot) }
        if item.state == .cached, !item.watched { slots.append(unwatchedSlot) }
        var entry = media
        for _ in 0...sides.count {
            let hash = names.hash(entry)
            for slot in slots { folders[slot].add(entry, hash: hash, in: names) }
            entry = names.entry(after: entry)
        }
        if isHLS { for slot in slots { addHLSFolder(in: slot, itemID: item.id) } }

        // No download or state change moves the times: a second backup of an unchanged library
        // copies nothing (the download date is an xattr). A change at the origin does.
        let time = Timestamp(item.mediaTime)
        let sidesLater = item.sidesTime == item.mediaTime
            ? 0 : (item.sidesTime.timeIntervalSince1970 - Double(time.seconds)).rounded(.up)
        items.set(TreeItems.Row(id: item.id, size: UInt64(max(0, item.size ?? 0)), seconds: Int64(time.seconds),
                                nanoseconds: UInt32(clamping: time.nanoseconds), media: media, sides: sides, state: item.state,
                                isHLS: isHLS, folderCount: UInt16(clamping: slots.count),
                                sidesLater: UInt32(clamping: Int64(sidesLater))),
                  licenceExpiresAt: licenceExpiresAt)
    }

    /// `<place>/.hls/<item id>/`, where the item's playlist finds its segments (DESIGN §3).
    /// Its files come from the item's stream, not the tree.
    private mutating func addHLSFolder(in slot: Int, itemID: Int64) {
        let place = folders[slot].inode
        guard let parent = HLSParent(folder: place) else { return }
        let hls = NodeID.hlsFolder(parent).inode
        let hlsSlot: Int
        if let existing = slots[hls] {
            hlsSlot = existing
        } else {
            hlsSlot = addFolder(hls, parent: place)
            add(FileName(".hls"), inode: hls, isDirectory: true, to: slot)
        }
        let itemFolder = NodeID.hlsItemFolder(parent, itemID: itemID).inode
        if slots[itemFolder] == nil { _ = addFolder(itemFolder, parent: hls) }
        add(FileName(String(itemID)), inode: itemFolder, isDirectory: true, to: hlsSlot)
    }

    /// The media file, then `<stem>-thumb.jpg` and `<stem>.<lang>.<vtt|srt>` when the catalog
    /// has them. A side file whose name would pass 255 bytes or whose language tag is not a
    /// plain tag is left out (feeds are untrusted: the tag becomes part of a name).
    static func files(fileName: String, hasThumbnail: Bool, thumbnailSize: Int64? = nil,
                      subtitles: [SubtitleTrack], nfoSize: UInt64? = nil) -> [TreeItemFile] {
        var files = [TreeItemFile(name: FileName(fileName), key: "media")]
        guard hasThumbnail || !subtitles.isEmpty || nfoSize != nil else { return files }
        let stem = stem(of: fileName)
        func add(_ name: String, key: String, size: Int64?) {
            guard name.utf8.count <= Self.maxNameBytes, files.count < NodeID.filesPerItem else { return }
            files.append(TreeItemFile(name: FileName(name), key: key, size: size.map { UInt64(max(0, $0)) }))
        }
        if hasThumbnail { add(stem + "-thumb.jpg", key: "thumbnail", size: thumbnailSize) }
        var languages = Set<String>()
        for track in subtitles {
            let language = track.language
            guard (1...35).contains(language.utf8.count),
                  language.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || ($0 < 0x80 && isalnum(Int32($0)) != 0) }),
                  languages.insert(language).inserted else { continue }
            let format = (track.format?.lowercased()).flatMap { ["vtt", "srt"].contains($0) ? $0 : nil }
                ?? (track.url.lowercased().hasSuffix(".srt") ? "srt" : "vtt")
            add("\(stem).\(language).\(format)", key: "subtitle.\(language)", size: track.size)
        }
        // Last: a subtitle file's number stays its place in the catalog's list.
        if let nfoSize { add(stem + ".nfo", key: TreeItemFile.sidecarKey, size: Int64(nfoSize)) }
        return files
    }

    /// Whether a media file named `name` may be hidden in its source's folder by a name
    /// added before it: the artwork, an `.hls` folder, or another item's side file or
    /// one-file view (`files`, `addItem`; the first name wins). `isHLS` says whether the
    /// library has an HLS item of that file name.
    static func mayBeHidden(_ name: String, isHLS: (String) throws -> Bool) rethrows -> Bool {
        if name == "folder.jpg" || name == ".hls" || [".vtt", ".srt", ".nfo", "-thumb.jpg"].contains(where: name.hasSuffix) {
            return true
        }
        return try isHLS(stem(of: name) + ".m3u8")
    }

    /// The longest name a folder entry may have (`NAME_MAX`), as the engine's media names
    /// keep to: a side file or one-file view whose name would be longer is left out.
    static let maxNameBytes = 255

    /// The file name without its extension.
    private static func stem(of fileName: String) -> String {
        fileName.lastIndex(of: ".").map { String(fileName[..<$0]) } ?? fileName
    }

    /// Lists each source's artwork as `folder.jpg` in its folder (`sidecars nfo`).
    mutating func addArtworks(_ sizes: [Int64: UInt64]) {
        for (sourceID, _) in sizes {
            guard let slot = sourceSlots[sourceID] else { continue }
            add(FileName("folder.jpg"), inode: NodeID.sourceArtwork(sourceID).inode, isDirectory: false, to: slot)
        }
        for (sourceID, size) in sizes where sourceSlots[sourceID] != nil {
            artworks[sourceID] = TreeSnapshot.SourceArtwork(size: size, time: artworkTimes[sourceID] ?? folderTime)
        }
    }

    mutating func finish() -> TreeSnapshot {
        names.shrink()
        items.share(names)
        var byInode = [UInt64: TreeFolder](minimumCapacity: folders.count)
        for var folder in folders {
            folder.share(names)
            byInode[folder.inode] = folder
        }
        return TreeSnapshot(folders: byInode, items: items, uid: uid, gid: gid, folderTime: folderTime, artworks: artworks)
    }
}

extension Timestamp {
    init(_ date: Date) {
        let interval = date.timeIntervalSince1970
        let seconds = interval.rounded(.down)
        self.init(seconds: Int(seconds), nanoseconds: Int(((interval - seconds) * 1e9).rounded(.down)))
    }
}
