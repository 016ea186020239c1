import CSystemShim
import Dispatch
public import Foundation
public import Logging
public import OfflineEngine
public import OfflineFUSE
import Synchronization

// Lock order: `directories`, `notifier` and `statusFiles` are leaves; the tree, the open files,
// the control file and the events file have their own (see their files); no lock is held
// while replying or while a command runs.

/// The mount's kernel-facing layer: one thin method per FUSE operation, each calling a helper
/// that returns a value or an `Errno`, then sending exactly one reply. Listings and attributes
/// come from the in-memory `MountTree`; bytes from the engine, through `OpenFiles`.
///
/// Refusals (HARDENING test 6; the same for root, which `default_permissions` does not stop):
/// - `EACCES`: writing media data — open for write or with `O_TRUNC`, `truncate`, `write`,
///   and creating files (`create`, `mknod`): the data of the mount is the engine's.
/// - `EPERM`: changing the namespace or metadata — `rename`, `mkdir`, `rmdir`, `link`,
///   `symlink`, `chmod`, `chown`, `utimens`, `setxattr` of anything but the two toggles
///   (`user.offline.download` on items, `user.offline.subscribed` on source folders) and the
///   play state (`user.offline.position`, `user.offline.watched` on items), and
///   `rm` of a thumbnail or subtitle.
/// - `rm` of an item's media file evicts its cached bytes; the item stays listed.
/// - The root's hidden files (`FileSystem+HiddenFiles.swift`): only `.control` is writable.
///
/// Commands (control lines, toggles) go to the `CommandPerformer`: the mount changes no state
/// itself. After a command the tree is rebuilt before the request is answered and the
/// kernel's stale entries are invalidated from the notifier thread.
public final class OfflineFileSystem: FileSystemOperations {
    /// Seconds the kernel may cache names, misses and attributes: changes also arrive as
    /// notifications, so this only bounds what a lost notification can hide.
    let cacheTimeout: Double

    public let tree: MountTree
    let openFiles: OpenFiles
    /// Tells players, scanners and copiers apart at open (`ReaderClassifier`).
    let classifier: ReaderClassifier
    /// HLS playlists, `.hls/<id>/` parts and one-file views (DESIGN §3).
    let hls: HLSFiles
    let hlsStreams: HLSStreams
    let logger: Logger
    /// The library as the engine shows it (`LibraryView`): the mount reads no store.
    let view: LibraryView
    let performer: any CommandPerformer
    let control: ControlFile
    let events: EventsFile
    /// The engine's download speeds, for the status files.
    let downloadSpeeds: @Sendable () -> SpeedMeter
    let clock: @Sendable () -> Date
    /// Contents of each open `.status`/`.status.json`, so reads at any offset see one
    /// consistent text, and the latest snapshot of each (`StatusSnapshots`).
    let statusFiles = Mutex(StatusSnapshots())
    private let libraryPath: String
    /// Open directories: each listing pages through the tree it started with, so a rebuild
    /// between two readdir calls can neither skip nor repeat a name.
    let directories = Mutex<(next: UInt64, open: [UInt64: (TreeSnapshot, TreeFolder)])>((1, [:]))
    private let notifier = Mutex<Notifier?>(nil)  // set once the session exists
    /// The desktop's thumbnails of listed items, once mounted (`enableDesktopThumbnails`).
    let desktopThumbnails = Mutex<DesktopThumbnails?>(nil)  // leaf lock
    let xattrTables = XattrTables()

    /// - Parameters:
    ///   - library: what the mount shows, as the engine reads it: a view, not the `Library`,
    ///     so nothing here can reach the store itself.
    ///   - hls: the engine's HLS renditions.
    ///   - downloadSpeeds: the engine's (`Scheduler.downloadSpeeds`).
    public init(library: LibraryView, fetcher: RangeFetcher, actions: any MountActions,
                performer: any CommandPerformer, options: MountOptions, hls hlsStreams: HLSStreams,
                downloadSpeeds: @escaping @Sendable () -> SpeedMeter = { SpeedMeter() },
                clock: @escaping @Sendable () -> Date = { Date() }, logger: Logger) {
        self.downloadSpeeds = downloadSpeeds
        self.logger = logger
        self.clock = clock
        self.performer = performer
        view = library
        cacheTimeout = options.cacheTimeout
        libraryPath = library.folder.path
        events = EventsFile(view: view)
        let refresh = RefreshBox()
        control = ControlFile(performer: performer, view: view, logger: logger) { refresh.run() }
        let reading = LibraryReader(fetcher: fetcher, view: view, readTimeout: options.readTimeout,
                                    outageTimeout: options.outageTimeout)
        let hls = HLSFiles(streams: hlsStreams, library: reading, view: view,
                           readTimeout: options.readTimeout, clock: clock, logger: logger)
        self.hls = hls
        self.hlsStreams = hlsStreams
        tree = MountTree(view: view, uid: getuid(), gid: getgid(), clock: clock, logger: logger,
                         joinedExtension: { hls.joinedExtension(itemID: $0) })
        openFiles = OpenFiles(library: reading, view: view, actions: actions, errnos: ErrnoTable(logger: logger),
                            clock: clock, logger: logger)
        classifier = ReaderClassifier(classes: options.programClasses)
        refresh.set { [weak self] in self?.refreshNow() }
        // A catalog that stated a media size wrong: the kernel must ask the size again
        // before it ends the file where the catalog said, so this goes before the answer.
        reading.onOriginSize { [weak self] itemID in
            self?.notifier.withLock { $0 }?.invalidateAttributesNow(NodeID.itemFile(itemID: itemID, file: 0).inode)
        }
    }

    /// Rebuilds the tree now (after a command changed the store) and queues the kernel
    /// notifications the change needs; they are sent from the notifier thread, never here.
    func refreshNow() {
        let notifier = notifier.withLock { $0 }
        let thumbnails = desktopThumbnails.withLock { $0 }
        xattrTables.removeAll()
        tree.refresh { [xattrTables] old, new in
            xattrTables.removeAll()
            thumbnails?.treeChanged(from: old, to: new)
            guard let notifier else { return }
            for notification in TreeDiff.notifications(from: old, to: new) { notifier.enqueue(notification) }
        }
    }

    /// Writes the desktop's thumbnails of the items of listed folders (policy
    /// `thumbnail-cache`), for `mountpoint`'s paths, into `cacheFolder`
    /// (`DesktopThumbnailCache.defaultFolder()` by default).
    public func enableDesktopThumbnails(mountpoint: String, cacheFolder: String? = nil) {
        let (library, view) = (openFiles.library, view)
        let cacheFolder = cacheFolder ?? DesktopThumbnailCache.defaultFolder()
        let thumbnails = DesktopThumbnails(
            mountpoint: mountpoint, cacheFolder: cacheFolder,
            thumbnail: { itemID in library.wholeSideFile(itemID: itemID, key: "thumbnail") },
            enabled: { view.thumbnailCacheEnabled() }, logger: logger)
        desktopThumbnails.withLock { $0 = thumbnails }
    }

    /// Builds the tree and starts watching the store; kernel notifications go to `notifier`.
    /// Requests that arrive before the tree is built wait for it (`MountTree.snapshot`) unless
    /// the store answers them exactly as the tree will (`earlyEntry`), so this may run on a
    /// thread of its own while the session already serves.
    /// - Parameters:
    ///   - backingFiles: the session's, for passthrough opens of cached media.
    ///   - alongside: runs on this thread while the tree builds on another (the library's
    ///     integrity check); requests do not wait for it, only the refresher does (see
    ///     docs/decisions.md). When it returns false nothing starts and `start` returns false.
    @discardableResult
    public func start(notifier: Notifier, backingFiles: BackingFiles? = nil, refreshInterval: Duration,
                      alongside: () -> Bool = { true }) -> Bool {
        self.notifier.withLock { $0 = notifier }
        if let backingFiles { openFiles.passthrough.attach(backingFiles) }
        let built = DispatchSemaphore(value: 0)
        let builder = Thread { [tree] in
            csystem_name_this_thread("ofs-tree-first")
            tree.refresh(force: true)
            built.signal()
        }
        builder.start()
        let ready = alongside()
        built.wait()
        guard ready else { return false }
        events.update()
        tree.startRefreshing(every: refreshInterval) { [weak self] old, new in
            self?.xattrTables.removeAll()
            self?.desktopThumbnails.withLock { $0 }?.treeChanged(from: old, to: new)
            for notification in TreeDiff.notifications(from: old, to: new) { notifier.enqueue(notification) }
        }
        return true
    }

    /// Ends the refresher; requests still waiting for a first build go on with the tree as
    /// it is (for a mount that gives up while starting).
    public func stop() {
        tree.openWithoutBuilding()
        tree.stop()
    }

    // MARK: - Operations

    public func initialize(_ connection: inout ConnectionInfo) {
        connection.enable([.asyncRead, .readdirplus, .readdirplusAuto, .parallelDirectoryOperations])
        // Cached media read straight from the cache file; media still arriving skips the
        // page cache and stays mmappable (`PassthroughFiles`).
        connection.kernelFeatures = [.passthrough, .directIOMmap]
    }

    public func destroy() { tree.stop() }

    public func lookup(parent: UInt64, name: FileName, reply: Reply<Entry>) {
        reply.complete(doLookup(parent: parent, name: name))
    }

    public func getattr(inode: UInt64, file: FileInfo?, reply: Reply<FileAttributes>) {
        // The root's attributes do not depend on the library: a `stat` of the mount point is
        // answered while the tree is still being built (the mount is up as soon as it mounts).
        let found = NodeID(inode: inode) == .root ? attributes(tree.snapshotWithoutWaiting, inode)
            : earlyAttributes(inode).map { .success($0) } ?? attributes(tree.snapshot, inode)
        switch found {
        case .success(let found): reply.succeed(found.attributes, timeout: found.timeout)
        case .failure(let errno): reply.fail(errno)
        }
    }

    public func open(inode: UInt64, file: FileInfo, reply: Reply<FileInfo>) {
        let snapshot = tree.snapshot
        xattrTables.remove(inode)  // an open item is locked
        if let (item, number) = snapshot.itemFile(inode), number == 0, item.isHLS, !file.isWritable, file.flags & O_TRUNC == 0 {
            // The playlist may need the engine to choose a rendition first: answered later.
            return hls.openPlaylist(item: item, file: file, openFiles: openFiles, reply: reply)
        }
        if case .hlsPart(let itemID, let index)? = NodeID(inode: inode), let item = snapshot.items[itemID],
           !file.isWritable, file.flags & O_TRUNC == 0 {
            // A part whose size is not known yet waits for its first bytes: answered later.
            let readerClass = classifier.classify(threadID: reply.request.context.pid).readerClass
            return hls.openPart(item: item, index: index, file: file, openFiles: openFiles, readerClass: readerClass, reply: reply)
        }
        switch doOpen(inode: inode, file: file, threadID: reply.request.context.pid) {
        case .success(let answer):
            if let backing = answer.passthrough {
                reply.succeed(answer.file, passthrough: backing)
            } else {
                reply.succeed(answer.file)
            }
            answer.afterReply?()
        case .failure(let errno): reply.fail(errno)
        }
    }

    public func read(inode: UInt64, size: Int, offset: Int64, file: FileInfo, reply: Reply<ReadData>) {
        if case .hidden(let hidden)? = NodeID(inode: inode) {
            return reply.succeed(bytes: readHidden(hidden, handle: file.handle, offset: offset, size: size))
        }
        openFiles.read(handle: file.handle, size: size, offset: offset, reply: reply)
    }

    public func write(inode: UInt64, data: [UInt8], offset: Int64, file: FileInfo, reply: Reply<Int>) {
        guard case .hidden(.control)? = NodeID(inode: inode) else { return reply.fail(.permissionDenied) }
        switch control.write(handle: file.handle, data: data, owner: file.lockOwner) {
        case .success(let count): reply.succeed(count)
        case .failure(let errno): reply.fail(errno)
        }
    }

    public func flush(inode: UInt64, file: FileInfo, reply: Reply<Void>) {
        guard case .hidden(.control)? = NodeID(inode: inode) else { return reply.succeed() }
        reply.complete(control.flush(handle: file.handle, owner: file.lockOwner))
    }

    public func release(inode: UInt64, file: FileInfo, reply: Reply<Void>) {
        if case .hidden(let hidden)? = NodeID(inode: inode) {
            releaseHidden(hidden, handle: file.handle)
        } else {
            openFiles.release(handle: file.handle)
            xattrTables.remove(inode)
        }
        reply.succeed()
    }

    public func unlink(parent: UInt64, name: FileName, reply: Reply<Void>) {
        reply.complete(doUnlink(parent: parent, name: name))
    }

    public func statfs(inode: UInt64, reply: Reply<FileSystemStatistics>) {
        var result = FileSystemStatistics()
        var info = statvfs()
        if statvfs(libraryPath, &info) == 0 {
            result.blockSize = info.f_bsize
            result.fragmentSize = info.f_frsize
            result.totalBlocks = UInt64(info.f_blocks)
            result.freeBlocks = UInt64(info.f_bfree)
            result.availableBlocks = UInt64(info.f_bavail)
            // The cache's file system's inodes: `df -i` of the mount then says what room is
            // left for cache files (the mount's own names take none).
            result.totalFiles = UInt64(info.f_files)
            result.freeFiles = UInt64(info.f_ffree)
            result.availableFiles = UInt64(info.f_favail)
        }
        reply.succeed(result)
    }

    public func setxattr(inode: UInt64, name: String, value: [UInt8], flags: Int32, reply: Reply<Void>) {
        // As for reading: outside `user.` (`setfacl`, `chcon`) the mount has no namespace.
        guard name.hasPrefix("user.") else { return reply.fail(.notSupported) }
        reply.complete(doSetxattr(inode: inode, name: name, value: value))
    }

    public func getxattr(inode: UInt64, name: String, reply: Reply<[UInt8]>) {
        // `ls -l` asks every entry for security.selinux and an ACL. The mount has no attribute
        // outside `user.`: `ENOTSUP` says so (as for a namespace a filesystem lacks), and
        // `ls` then stops asking for the rest of the mount, a round trip saved per entry.
        guard name.hasPrefix("user.") else { return reply.fail(.notSupported) }
        guard Xattrs.isOurs(name) else { return reply.fail(.noData) }
        switch attributeTable(inode) {
        case .success(let table):
            guard let value = table.first(where: { $0.0 == name })?.1 else { return reply.fail(.noData) }
            reply.succeed(value)
        case .failure(let errno): reply.fail(errno)
        }
    }

    public func listxattr(inode: UInt64, reply: Reply<[String]>) {
        switch attributeTable(inode) {
        case .success(let table): reply.succeed(table.map(\.0))
        case .failure(let errno): reply.fail(errno)
        }
    }


    // MARK: - Helpers

    func doLookup(parent: UInt64, name: FileName) -> Result<Entry, Errno> {
        if let early = earlyEntry(parent: parent, name: name) { return .success(early) }
        let snapshot = tree.snapshot
        guard let folder = snapshot.folders[parent] else {
            return .failure(snapshot.itemFile(parent) != nil ? .notDirectory : .noSuchFileOrDirectory)
        }
        let inode: UInt64
        if name.bytes == [0x2E] {
            inode = folder.inode
        } else if name.bytes == [0x2E, 0x2E] {
            inode = folder.parent
        } else if case .hlsItemFolder(_, let itemID)? = NodeID(inode: parent) {
            // `.hls/<id>/` lists the item's stream, not the tree.
            guard let part = hls.partInode(itemID: itemID, named: name.description) else {
                // Not cached: the parts appear when the playlist's first open chooses a rendition.
                return .success(.negative(timeout: 0))
            }
            inode = part
        } else if let child = folder.child(named: name) {
            inode = child.inode
        } else {
            return .success(.negative(timeout: cacheTimeout))
        }
        return attributes(snapshot, inode).map(entry)
    }

    /// Attributes from the tree, with a side file's size from the cache and a media size
    /// the origin contradicted from the engine, and how long the kernel may keep them
    /// (`attributeTimeout`).
    func attributes(_ snapshot: TreeSnapshot, _ inode: UInt64) -> Result<(attributes: FileAttributes, timeout: Double), Errno> {
        let node = NodeID(inode: inode)
        if case .hidden(let hidden)? = node { return hiddenAttributes(hidden).map { ($0, 0) } }
        guard var attributes = snapshot.attributes(inode) else { return .failure(.noSuchFileOrDirectory) }
        var size: Int64?
        var isHLS = false
        if case .hlsPart(let itemID, let index)? = node {
            guard let part = hls.part(itemID: itemID, index: index) else { return .failure(.noSuchFileOrDirectory) }
            size = hls.size(of: part, itemID: itemID)
        } else if let (item, file) = snapshot.itemFile(inode) {
            let key = item.files.key(file)
            isHLS = item.isHLS
            if item.isHLS && file == 0 {
                size = hls.playlist(itemID: item.id).map { Int64($0.count) }
            } else if file == 0 {
                // The origin's, once a reader learned it is not the catalog's (the tree
                // has it moments later).
                size = openFiles.library.originMediaSize(itemID: item.id)
            } else if key == TreeItemFile.joinedKey {
                size = hls.joinedFile(itemID: item.id)?.size
            } else if file > 0 {
                // The cache file's, once it is all there; else what the catalog or sync said.
                // An `.nfo` has no cache file: the tree holds its size.
                let cached = key == TreeItemFile.sidecarKey ? nil : openFiles.library.sideFileSize(itemID: item.id, key: key)
                size = cached ?? item.files[file].size.map { Int64($0) }
            }
        }
        if let size {
            attributes.size = UInt64(size)
            attributes.blocks = (UInt64(size) + 511) / 512
        }
        // A side file of unknown size says 0, which the kernel must not keep: an open that finds
        // it whole reads through the page cache, which stops at the size it holds, and a reader
        // got an empty file. Kept for no time, a read past it asks again.
        if case .itemFile(_, let file)? = node, file > 0, size == nil {
            return .success((attributes, 0))
        }
        return .success((attributes, Self.attributeTimeout(for: node, cacheTimeout: cacheTimeout) { _ in isHLS }))
    }

    func entry(_ found: (attributes: FileAttributes, timeout: Double)) -> Entry {
        Entry(attributes: found.attributes, attributeTimeout: found.timeout, entryTimeout: cacheTimeout)
    }

    /// How long the kernel may keep a node's attributes. Those the tree holds (folders, media)
    /// are kept for `cacheTimeout`: every change to them is notified (`TreeDiff`). A size
    /// that lives outside the tree is not: a side file's, an HLS playlist's or one-file
    /// view's grows as its bytes arrive, so it is kept a second at most. The hidden files'
    /// are never kept (`.events` grows and `tail -f` polls `fstat`), nor HLS parts'.
    static func attributeTimeout(for node: NodeID?, cacheTimeout: Double, isHLS: (_ itemID: Int64) -> Bool) -> Double {
        switch node {
        case .hlsPart?, .hidden?:
            return 0
        case .itemFile(let itemID, let file)?:
            let sizeFromTree = file == 0 && !isHLS(itemID)
            return sizeFromTree ? cacheTimeout : min(cacheTimeout, untrackedSizeTimeout)
        default:
            return cacheTimeout
        }
    }

    /// Seconds the kernel may keep a size the tree does not track (see `attributeTimeout`).
    static let untrackedSizeTimeout: Double = 1

    func doOpen(inode: UInt64, file: FileInfo, threadID: Int32 = 0) -> Result<OpenAnswer, Errno> {
        if case .hidden(let hidden)? = NodeID(inode: inode) { return openHidden(hidden, file: file).map { OpenAnswer(file: $0) } }
        let snapshot = tree.snapshot
        if case .hlsPart? = NodeID(inode: inode) { return .failure(.permissionDenied) }  // writes; reads went to `open`
        if case .sourceArtwork(let sourceID)? = NodeID(inode: inode) {
            guard snapshot.artworks[sourceID] != nil else { return .failure(.noSuchFileOrDirectory) }
            if file.isWritable || file.flags & O_TRUNC != 0 { return .failure(.permissionDenied) }
            guard let bytes = FileManager.default.contents(atPath: SourceArtwork.path(library: URL(fileURLWithPath: libraryPath),
                                                                                      sourceID: sourceID)) else {
                return .failure(.noSuchFileOrDirectory)
            }
            return .success(OpenAnswer(file: openFiles.openMemory(Array(bytes), itemID: -sourceID, file: file)))
        }
        guard let (item, number) = snapshot.itemFile(inode) else {
            return .failure(snapshot.folders[inode] != nil ? .isDirectory : .noSuchFileOrDirectory)
        }
        if file.isWritable || file.flags & O_TRUNC != 0 { return .failure(.permissionDenied) }
        let (program, readerClass) = classifier.classify(threadID: threadID)
        if item.files.key(number) == TreeItemFile.joinedKey {
            return hls.openJoined(item: item, file: file, openFiles: openFiles, readerClass: readerClass).map { OpenAnswer(file: $0) }
        }
        if readerClass != .other { logger.debug("\(program) opens item \(item.id) as a \(readerClass.rawValue)") }
        let opened = openFiles.open(item: item, fileNumber: number, file: file, readerClass: readerClass)
        if case .success(let answer) = opened, answer.treeIsBehind { refreshNow() }
        return opened
    }

    func doUnlink(parent: UInt64, name: FileName) -> Result<Void, Errno> {
        let snapshot = tree.snapshot
        guard let folder = snapshot.folders[parent] else { return .failure(.noSuchFileOrDirectory) }
        if case .hlsItemFolder(_, let itemID)? = NodeID(inode: parent) {
            // A stream's parts are not in the tree's folder; like side files they are not removable.
            return .failure(hls.partInode(itemID: itemID, named: name.description) == nil ? .noSuchFileOrDirectory : .notPermitted)
        }
        guard let child = folder.child(named: name) else { return .failure(.noSuchFileOrDirectory) }
        if child.isDirectory { return .failure(.isDirectory) }
        guard let (item, number) = snapshot.itemFile(child.inode), number == 0 else { return .failure(.notPermitted) }
        let result = openFiles.evict(itemID: item.id)
        if case .failure(.notPermitted) = result {
            // The shell says only "Operation not permitted": the reason goes where a script looks.
            control.report(EngineError.invalidArgument("\(name) is locked; unlock it first"), line: nil, origin: "rm",
                           item: String(item.id))
        }
        if case .success = result {
            // The kernel may hold the item's pages (keep_cache): they are not the cache's any more.
            notifier.withLock { $0 }?.invalidateInode(child.inode)
            // As after a command: `state/cached` and link counts change before `rm` returns.
            refreshNow()
        }
        return result
    }
}
