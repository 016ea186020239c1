import Foundation
import Logging
import OfflineEngine
import OfflineTestSupport
import OfflineFUSE
@testable import OfflineMount
import OfflineStore
import Synchronization
import Testing

/// The mount's pure parts, with no kernel: options, inode numbers, the tree builder and the
/// notifications a rebuild sends.
struct TreeUnitTests {
    @Test(arguments: [
        (["read-timeout=10s"], 10_000, true),
        (["read_timeout=500ms,allow_other"], 500, true),
        (["read-timeout=2m", "noauto_unmount"], 120_000, true),
        (["read-timeout=7"], 7_000, true),
    ])
    func mountOptionsParse(lists: [String], timeoutMilliseconds: Int64, valid: Bool) throws {
        let options = try MountOptions.parse(lists)
        #expect(options.readTimeout == .milliseconds(timeoutMilliseconds))
    }

    @Test func playersRideOutTwoMinutesUnlessToldOtherwise() throws {
        #expect(try MountOptions.parse([]).outageTimeout == .seconds(120))
        #expect(try MountOptions.parse(["outage-timeout=5m"]).outageTimeout == .seconds(300))
        #expect(try MountOptions.parse(["outage_timeout=10s,read-timeout=3s"]).outageTimeout == .seconds(10))
        #expect(throws: MountOptions.ParseError.self) { try MountOptions.parse(["outage-timeout=soon"]) }
    }

    /// The tree checks the library once a second for the life of a mount, reading its build
    /// hook each time: the hook must be no deeper to call after a thousand checks. (It was
    /// two reabstraction thunks deeper after each: the tree thread's stack grew ~4 KiB a
    /// minute and would have overflowed after about three days.)
    @Test func aThousandChecksLeaveTheBuildHookNoDeeperToCall() throws {
        let library = try StandardLibrary()
        let tree = MountTree(view: library.fixture.library.view, uid: 0, gid: 0, clock: { Date() },
                             logger: Logger(label: "tree-unit-tests"))
        let deepest = Mutex<Int>(.max)
        tree.beforeBuild.withLock { $0.run = { deepest.withLock { $0 = min($0, stackAddress()) } } }
        func hookDepth() -> Int {
            deepest.withLock { $0 = .max }
            tree.refresh()
            return stackAddress() - deepest.withLock { $0 }
        }
        let first = hookDepth()
        for _ in 0..<1_000 { tree.refresh() }
        let deeper = hookDepth() - first
        #expect(deeper < 4096, "the hook's call went \(deeper) bytes deeper")
    }

    @Test func mountOptionsFixTheSecuritySettingsAndPassTheRest() throws {
        let plain = try MountOptions.parse([])
        #expect(plain.fuseOptions == ["default_permissions", "nosuid", "nodev", "fsname=offlinefs", "subtype=offlinefs", "auto_unmount",
                                      "max_read=983040"])
        #expect(plain.maxRead == 983_040)
        #expect(plain.readTimeout == .seconds(30))
        let asked = try MountOptions.parse(["allow_other,noauto_unmount,max_read=131072", "default_permissions"])
        #expect(asked.fuseOptions == ["default_permissions", "nosuid", "nodev", "fsname=offlinefs", "subtype=offlinefs",
                                      "allow_other", "max_read=131072"])
        #expect(asked.maxRead == 131_072)
        for bad in ["read-timeout=", "read-timeout=abc", "read-timeout=-1s", "refresh=0", "suid", "dev", "fsname=x"] {
            #expect(throws: MountOptions.ParseError.self, "\(bad)") { try MountOptions.parse([bad]) }
        }
    }

    @Test func inodeNumbersRoundTripAndNeverCollide() {
        let nodes: [NodeID] = [.root, .sources, .categories, .states, .recent, .stateFolder(0), .stateFolder(6),
                               .source(1), .source(1 << 39), .category(1), .category(77),
                               .itemFile(itemID: 1, file: 0), .itemFile(itemID: 1, file: 1), .itemFile(itemID: 123_456_789, file: 255),
                               .sourceArtwork(1), .sourceArtwork(77)]
        #expect(Set(nodes.map(\.inode)).count == nodes.count)
        for node in nodes { #expect(NodeID(inode: node.inode) == node, "\(node)") }
        #expect(NodeID(inode: 0) == nil)
        #expect(NodeID(inode: 6) == .hidden(.control))
        #expect(NodeID(inode: 9) == .hidden(.events))
        #expect(NodeID(inode: 10) == .unwatched)
        #expect(NodeID(inode: 11) == nil)  // reserved
    }

    @Test func anItemNamedByItsContentIDIsListedInStateFailedOnly() throws {
        var outline = ItemOutline(id: 7, sourceID: 1, fileName: "[ep-9]", type: .video, state: .failed, size: nil,
                                  bytesPresent: 0, publishedAt: nil, downloadedAt: nil, addedAt: Date(timeIntervalSince1970: 0),
                                  hasThumbnail: false, categoryIDs: [10])
        outline.namedByContentID = true
        let tree = TreeBuilder.build(sources: [source(1, "acme")], categories: [], items: [outline], uid: 0, gid: 0, folderTime: Timestamp(seconds: 0),
                                     recentCutoff: Date())
        let failed = NodeID.stateFolder(TreeSnapshot.stateFolders.firstIndex(of: .failed)!).inode
        #expect(tree.folders[failed]?.children.map(\.name.description) == ["[ep-9]"])
        #expect(tree.folders[NodeID.source(1).inode]?.children.isEmpty == true)
        #expect(tree.attributes(NodeID.itemFile(itemID: 7, file: 0).inode)?.linkCount == 1)
    }

    @Test func builderPlacesItemsInEveryFolderTheyBelongTo() throws {
        let now = Date()
        let sources = [source(1, "acme"), source(2, "quiet", subscribed: false)]
        let categories = [category(10, ["news"], parent: nil), category(11, ["news", "local"], parent: 10)]
        let listings = [
            listing(item(100, source: 1, "A [1].mp4", state: .cached, downloadedAt: now), "acme", [["news", "local"]]),
            listing(item(101, source: 1, "B [2].mp4", state: .queued), "acme", [["news"]]),
            listing(item(102, source: 2, "C [3].mp4", state: .discovered), "quiet", []),
            listing(item(103, source: 2, "D [4].mp4", state: .paused, bytes: 10), "quiet", []),
            listing(item(104, source: 1, nil, state: .metadataPending), "acme", []),
        ]
        let tree = TreeBuilder.build(sources: sources, categories: categories, items: listings, uid: 7, gid: 8,
                                     folderTime: Timestamp(seconds: 0), recentCutoff: now.addingTimeInterval(-3600))
        func names(_ node: NodeID) -> [String] { tree.folders[node.inode]?.children.map(\.name.description) ?? [] }
        #expect(names(.source(1)) == ["A [1].mp4", "B [2].mp4"])
        // An unsubscribed source's undownloaded items leave the listing; items with bytes stay.
        #expect(names(.source(2)) == ["D [4].mp4"])
        #expect(names(.category(10)) == ["local", "B [2].mp4"])
        #expect(names(.category(11)) == ["A [1].mp4"])
        #expect(names(.stateFolder(TreeSnapshot.stateFolders.firstIndex(of: .cached)!)) == ["A [1].mp4"])
        #expect(names(.recent) == ["A [1].mp4"])
        // Cached and not watched.
        #expect(names(.unwatched) == ["A [1].mp4"])
        #expect(tree.items[104] == nil)
        let attributes = try #require(tree.attributes(NodeID.itemFile(itemID: 100, file: 0).inode))
        #expect(attributes.uid == 7 && attributes.gid == 8 && attributes.mode == UInt32(S_IFREG) | 0o644)
        // Its publish time, not its download time: a download moves nothing a backup compares.
        #expect(attributes.modificationTime == Timestamp(seconds: 1_000))
        #expect(attributes.changeTime == attributes.modificationTime)
        // One link per folder that lists it: its source, news/local, state/cached, recent/ and
        // unwatched/.
        #expect(attributes.linkCount == 5)
        #expect(tree.attributes(NodeID.itemFile(itemID: 101, file: 0).inode)?.linkCount == 3)
    }

    /// The mount reads `itemOutlines()`; the tree must be the one the full listings give.
    @Test func theTreeFromTheStoresOutlinesIsTheTreeFromItsFullListings() throws {
        let library = try StandardLibrary()
        let (fixture, store) = (library.fixture, library.fixture.store)
        let quiet = try fixture.addSource("quiet")
        let quietItems = try fixture.merge(quiet, [
            ItemSpec(contentID: "q-1", title: "Hidden", size: 10),
            ItemSpec(contentID: "q-2", title: "../Kept \u{202E}4pm.exe", size: 10, categories: [["news", "local"]], thumbnail: true),
            ItemSpec(contentID: "q-3", title: "Gone", size: 10, categories: [["family"]]),
        ])
        try store.addPresentRange(itemID: quietItems["q-2"]!.id, file: "media", range: 0..<5)
        try store.setState(itemID: quietItems["q-3"]!.id, state: .deleted)
        try store.setSubscribed(name: "quiet", false)
        try store.addPendingItem(sourceID: quiet.id, contentID: "q-4")

        let sources = try store.sources(), categories = try store.categories()
        let cutoff = library.downloadedAt.addingTimeInterval(-60)
        let fromListings = TreeBuilder.build(sources: sources, categories: categories, items: try store.items(matching: .all),
                                             uid: 1, gid: 2, folderTime: Timestamp(seconds: 5), recentCutoff: cutoff)
        let tree = TreeBuilder.build(sources: sources, categories: categories, items: try store.itemOutlines(),
                                     uid: 1, gid: 2, folderTime: Timestamp(seconds: 5), recentCutoff: cutoff)
        #expect(tree.folders == fromListings.folders)
        #expect(tree.items == fromListings.items)

        func names(_ node: NodeID) -> [String] { tree.folders[node.inode]?.children.map(\.name.description) ?? [] }
        let kept = "_..∕Kept 4pm.exe [q-2].mp4"
        #expect(names(.source(quiet.id)) == [kept, "_..∕Kept 4pm.exe [q-2]-thumb.jpg"])
        let local = try #require(categories.first { $0.path == ["news", "local"] })
        #expect(names(.category(local.id)) == [StandardLibrary.launch] + StandardLibrary.launchSideFiles + [kept, "_..∕Kept 4pm.exe [q-2]-thumb.jpg"])
        #expect(names(.recent) == [StandardLibrary.empty, StandardLibrary.launch] + StandardLibrary.launchSideFiles
                + [StandardLibrary.tiny, StandardLibrary.other])
        #expect(tree.items.count == library.items.count + 1)
    }

    @Test func sideFilesSitBesideTheMediaAndHostileLanguageTagsAreDropped() {
        var it = item(1, source: 1, "Show [x].mp4", state: .discovered)
        it.thumbnailURL = "http://h/t.jpg"
        it.subtitles = [SubtitleTrack(language: "en", url: "http://h/en.vtt"), SubtitleTrack(language: "fr", url: "http://h/fr.srt"),
                        SubtitleTrack(language: "../../x", url: "http://h/x.vtt"), SubtitleTrack(language: "en", url: "http://h/en2.vtt")]
        let files = TreeBuilder.files(of: it, fileName: "Show [x].mp4").map(\.name.description)
        #expect(files == ["Show [x].mp4", "Show [x]-thumb.jpg", "Show [x].en.vtt", "Show [x].fr.srt"])
    }

    @Test func aRebuildInvalidatesChangedFoldersVanishedNamesAndChangedItems() {
        let sources = [source(1, "acme")]
        let before = TreeBuilder.build(sources: sources, categories: [], items: [
            listing(item(1, source: 1, "A [1].mp4", state: .queued), "acme", []),
            listing(item(2, source: 1, "B [2].mp4", state: .discovered), "acme", []),
        ], uid: 0, gid: 0, folderTime: Timestamp(seconds: 0), recentCutoff: .distantFuture)
        var grown = item(2, source: 1, "B [2].mp4", state: .discovered)
        grown.size = 999
        let after = TreeBuilder.build(sources: sources, categories: [], items: [
            listing(item(1, source: 1, "A [1].mp4", state: .downloading), "acme", []),
            listing(grown, "acme", []),
        ], uid: 0, gid: 0, folderTime: Timestamp(seconds: 0), recentCutoff: .distantFuture)
        let notifications = Set(TreeDiff.notifications(from: before, to: after))
        let queued = NodeID.stateFolder(0).inode, downloading = NodeID.stateFolder(1).inode
        #expect(notifications.contains(.invalidateInode(inode: queued, offset: 0, length: 0)))
        #expect(notifications.contains(.invalidateEntry(parent: queued, name: "A [1].mp4")))
        #expect(notifications.contains(.invalidateInode(inode: downloading, offset: 0, length: 0)))
        #expect(notifications.contains(.invalidateEntry(parent: downloading, name: "A [1].mp4")))  // a cached miss goes
        #expect(notifications.contains(.invalidateInode(inode: NodeID.itemFile(itemID: 1, file: 0).inode, offset: -1, length: 0)))
        #expect(notifications.contains(.invalidateInode(inode: NodeID.itemFile(itemID: 2, file: 0).inode, offset: 0, length: 0)))
        #expect(!notifications.contains(.invalidateInode(inode: NodeID.source(1).inode, offset: 0, length: 0)))
    }

    @Test func aSideFileWhoseSizeWasCorrectedLosesItsCachedPages() {
        let sources = [source(1, "acme")]
        func build(thumbnailSize: Int64) -> TreeSnapshot {
            var it = item(1, source: 1, "A [1].mp4", state: .discovered)
            it.thumbnailURL = "http://h/a.jpg"
            it.thumbnailSize = thumbnailSize
            it.subtitles = [SubtitleTrack(language: "en", url: "http://h/a.vtt", size: 40)]
            return TreeBuilder.build(sources: sources, categories: [], items: [listing(it, "acme", [])],
                                     uid: 0, gid: 0, folderTime: Timestamp(seconds: 0), recentCutoff: .distantFuture)
        }
        let notifications = Set(TreeDiff.notifications(from: build(thumbnailSize: 10), to: build(thumbnailSize: 3_000)))
        // The thumbnail's attributes and pages go; the media's and the subtitles' attributes only.
        #expect(notifications.contains(.invalidateInode(inode: NodeID.itemFile(itemID: 1, file: 1).inode, offset: 0, length: 0)))
        #expect(notifications.contains(.invalidateInode(inode: NodeID.itemFile(itemID: 1, file: 0).inode, offset: -1, length: 0)))
        #expect(notifications.contains(.invalidateInode(inode: NodeID.itemFile(itemID: 1, file: 2).inode, offset: -1, length: 0)))
    }

    @Test func aRebuildFromRowsIsTheTreeBuiltAtOnce() {
        let sources = [source(1, "acme")]
        func build(_ listings: [ItemListing]) -> TreeSnapshot {
            TreeBuilder.build(sources: sources, categories: [], items: listings, uid: 0, gid: 0,
                              folderTime: Timestamp(seconds: 0), recentCutoff: .distantFuture)
        }
        // As a running mount rebuilds: the rows one at a time, into a tree sized like the old one.
        func rebuild(_ listings: [ItemListing], previous: TreeSnapshot) -> TreeSnapshot {
            let outlines = listings.compactMap { ItemOutline($0.item) }
            return TreeBuilder.build(sources: sources, categories: [], rows: { add in outlines.forEach(add) }, uid: 0, gid: 0,
                                     folderTime: Timestamp(seconds: 0), recentCutoff: .distantFuture, previous: previous)
        }
        var withSideFiles = item(3, source: 1, "C [3].mp4", state: .queued)
        withSideFiles.thumbnailURL = "http://h/c.jpg"
        let before = build([listing(item(1, source: 1, "A [1].mp4", state: .queued), "acme", []),
                            listing(item(2, source: 1, "B [2].mp4", state: .queued), "acme", []),
                            listing(withSideFiles, "acme", [])])
        let after = rebuild([listing(item(1, source: 1, "A [1].mp4", state: .cached), "acme", []),
                             listing(item(2, source: 1, "Renamed [2].mp4", state: .queued), "acme", []),
                             listing(withSideFiles, "acme", [])], previous: before)
        #expect(after.items[1]?.state == .cached)
        #expect(after.items[2]?.files.map(\.name.description) == ["Renamed [2].mp4"])
        #expect(after.items[3]?.files.map(\.name.description) == ["C [3].mp4", "C [3]-thumb.jpg"])
        #expect(after.items[3]?.files.map(\.key) == ["media", "thumbnail"])
        // Built at once without the tree before, the tree is the same.
        let fresh = build([listing(item(1, source: 1, "A [1].mp4", state: .cached), "acme", []),
                           listing(item(2, source: 1, "Renamed [2].mp4", state: .queued), "acme", []),
                           listing(withSideFiles, "acme", [])])
        #expect(after.items == fresh.items)
        #expect(after.folders == fresh.folders)
        #expect(after.items != before.items)
        #expect(after.items.count == 3 && after.items[4] == nil)
    }

    /// A folder's time moves when it gains or loses a name (Kodi rescans a folder only then);
    /// its link count is two plus its subfolders.
    @Test func foldersAreDatedByTheirLastChangeAndCountTheirSubfolders() throws {
        let sources = [source(1, "acme"), source(2, "beta")]
        func build(_ state: ItemState, at seconds: Int, previous: TreeSnapshot?) -> TreeSnapshot {
            let listings = [listing(item(1, source: 1, "A [1].mp4", state: state), "acme", []),
                            listing(item(2, source: 2, "B [2].mp4", state: .cached), "beta", [])]
            let tree = TreeBuilder.build(sources: sources, categories: [], items: listings, uid: 0, gid: 0,
                                         folderTime: Timestamp(seconds: 5), recentCutoff: .distantFuture)
            return previous.map { tree.dated(after: $0, now: Timestamp(seconds: seconds)) } ?? tree
        }
        let cached = NodeID.stateFolder(TreeSnapshot.stateFolders.firstIndex(of: .cached)!).inode
        let queued = NodeID.stateFolder(0).inode
        func time(_ tree: TreeSnapshot, _ inode: UInt64) -> Int? { tree.attributes(inode).map { Int($0.modificationTime.seconds) } }
        let first = build(.queued, at: 0, previous: nil)
        // Unchanged: every folder keeps the mount's time.
        let same = build(.queued, at: 100, previous: first)
        #expect([cached, queued, NodeID.source(1).inode].map { time(same, $0) } == [5, 5, 5])
        // Item 1 cached at 200: both state folders it left and joined move, its source does not.
        let moved = build(.cached, at: 200, previous: same)
        #expect([cached, queued, NodeID.source(1).inode].map { time(moved, $0) } == [200, 200, 5])
        // A later rebuild without a change keeps those times.
        #expect(time(build(.cached, at: 300, previous: moved), cached) == 200)
        // `sources/` holds two folders, `state/` seven; a source folder none.
        #expect(first.attributes(NodeID.sources.inode)?.linkCount == 4)
        #expect(first.attributes(NodeID.states.inode)?.linkCount == 9)
        #expect(first.attributes(NodeID.source(1).inode)?.linkCount == 2)
    }

    @Test func aChangedMediaAndChangedSideFilesShowTheirOwnTimes() throws {
        var changed = item(1, source: 1, "A [1].mp4", state: .cached)
        changed.thumbnailURL = "http://h/1.jpg"
        changed.mediaChangedAt = Date(timeIntervalSince1970: 2_000.5)
        changed.sidesChangedAt = Date(timeIntervalSince1970: 3_000.25)
        var plain = item(2, source: 1, "B [2].mp4", state: .cached)
        plain.thumbnailURL = "http://h/2.jpg"
        plain.publishedAt = Date(timeIntervalSince1970: 1_000.5)
        let tree = TreeBuilder.build(sources: [source(1, "acme")], categories: [],
                                     items: [listing(changed, "acme", []), listing(plain, "acme", [])], uid: 0, gid: 0,
                                     folderTime: Timestamp(seconds: 5), recentCutoff: .distantFuture)
        func time(_ id: Int64, _ file: Int) -> Timestamp? { tree.attributes(NodeID.itemFile(itemID: id, file: file).inode)?.modificationTime }
        // The media's time is its last change at the origin; its picture's the later change of what it is made of
        #expect(time(1, 0) == Timestamp(seconds: 2_000, nanoseconds: 500_000_000))
        #expect(time(1, 1) == Timestamp(seconds: 3_001))
        // An item that never changed shows its publish time on every file
        let published = Timestamp(seconds: 1_000, nanoseconds: 500_000_000)
        #expect(time(2, 0) == published && time(2, 1) == published)
        // The side files' time costs the tree's rows nothing: one row is still 48 bytes
        #expect(MemoryLayout<TreeItems.Row>.stride == 48)
    }

    @Test func aSourcesFolderJPGIsDatedByItsArtworkNotByTheMount() throws {
        var found = source(1, "owls")
        found.imageChangedAt = Date(timeIntervalSince1970: 4_000)
        let never = source(2, "bats")
        let tree = TreeBuilder.build(sources: [found, never], categories: [], items: [], uid: 0, gid: 0,
                                     folderTime: Timestamp(seconds: 5), recentCutoff: .distantFuture,
                                     artworkSizes: [1: 10, 2: 20])
        #expect(tree.attributes(NodeID.sourceArtwork(1).inode)?.modificationTime == Timestamp(seconds: 4_000))
        #expect(tree.attributes(NodeID.sourceArtwork(2).inode)?.modificationTime == Timestamp(never.addedAt))
    }

    @Test func everyNameInALargeFolderIsFoundAndATakenNameKeepsItsFirstOwner() {
        let sources = [source(1, "acme")]
        // Every tenth item takes the name of the item before it.
        let listings = (1...5000).map { id -> ItemListing in
            let name = id % 10 == 0 ? "Item \(id - 1).mp4" : "Item \(id).mp4"
            return listing(item(Int64(id), source: 1, name, state: .queued), "acme", [])
        }
        let tree = TreeBuilder.build(sources: sources, categories: [], items: listings, uid: 0, gid: 0,
                                     folderTime: Timestamp(seconds: 0), recentCutoff: .distantFuture)
        for folder in [NodeID.source(1), NodeID.stateFolder(0)] {
            let listed = tree.folders[folder.inode]
            #expect(listed?.children.count == 4500)
            for id in 1...5000 where id % 10 != 0 {
                #expect(listed?.child(named: FileName("Item \(id).mp4"))?.inode == NodeID.itemFile(itemID: Int64(id), file: 0).inode)
            }
            #expect(listed?.child(named: "Item 10.mp4") == nil)
        }
    }

    // MARK: - Fixtures

    // The store's records have no public initializers: build them the way they decode.
    func decode<T: Decodable>(_ type: T.Type, _ fields: [String: Any?]) -> T {
        let json = fields.compactMapValues { value -> Any? in
            switch value {
            case let date as Date: date.timeIntervalSinceReferenceDate
            case let some?: some
            case nil: nil
            }
        }
        let data = try! JSONSerialization.data(withJSONObject: json)
        return try! JSONDecoder().decode(T.self, from: data)
    }

    func source(_ id: Int64, _ name: String, subscribed: Bool = true) -> Source {
        decode(Source.self, ["id": id, "name": name, "feedURL": "http://h/f", "subscribed": subscribed, "addedAt": Date()])
    }

    func category(_ id: Int64, _ path: [String], parent: Int64?) -> OfflineStore.Category {
        decode(OfflineStore.Category.self, ["id": id, "name": path.last!, "parentID": parent, "folderName": path.last!,
                                            "path": path, "folderPath": path])
    }

    func item(_ id: Int64, source: Int64, _ fileName: String?, state: ItemState, downloadedAt: Date? = nil, bytes: Int64 = 0) -> Item {
        decode(Item.self, ["id": id, "sourceID": source, "contentID": "c\(id)", "title": "t", "type": "video",
                           "mediaURL": "http://h/\(id)", "size": 100, "publishedAt": Date(timeIntervalSince1970: 1_000),
                           "subtitles": [Any](), "state": state.rawValue, "requested": false, "locked": false,
                           "bytesPresent": bytes, "downloadedAt": downloadedAt, "fileName": fileName, "addedAt": Date(),
                           "updatedAt": Date(), "inCatalog": true])
    }

    func listing(_ item: Item, _ source: String, _ categories: [[String]]) -> ItemListing {
        decode(ItemListing.self, ["item": try! JSONSerialization.jsonObject(with: JSONEncoder().encode(item)),
                                  "sourceName": source, "categoryPaths": categories])
    }
}

/// Where the caller's stack is now (it grows down).
private func stackAddress() -> Int {
    var local = 0
    return withUnsafeMutablePointer(to: &local) { Int(bitPattern: $0) }
}

extension TreeBuilder {
    /// The tree of full listings (`ItemListing` rows): the same as from their outlines.
    static func build(sources: [Source], categories: [OfflineStore.Category], items: [ItemListing],
                      uid: UInt32, gid: UInt32, folderTime: Timestamp, recentCutoff: Date,
                      joinedExtensions: [Int64: String] = [:], licenceExpiries: [Int64: Date] = [:]) -> TreeSnapshot {
        let categoryIDs = Dictionary(categories.map { ($0.path, $0.id) }, uniquingKeysWith: { first, _ in first })
        let outlines = items.compactMap { listing in
            ItemOutline(listing.item, categoryIDs: listing.categoryPaths.compactMap { categoryIDs[$0] })
        }
        return build(sources: sources, categories: categories, items: outlines, uid: uid, gid: gid, folderTime: folderTime,
                     recentCutoff: recentCutoff, joinedExtensions: joinedExtensions, licenceExpiries: licenceExpiries)
    }

    static func files(of item: Item, fileName: String) -> [TreeItemFile] {
        files(fileName: fileName, hasThumbnail: item.thumbnailURL != nil, thumbnailSize: item.thumbnailSize,
              subtitles: item.subtitles)
    }
}
