import Foundation
import Logging
import OfflineEngine
import OfflineFUSE
import Synchronization

// Lock order: `table` is a leaf; no lock is held while calling the engine or replying.

/// What an open answers: the file's flags and handle, and the backing file its reads pass
/// through to in the kernel, if they do.
struct OpenAnswer {
    var file: FileInfo
    var passthrough: BackingFile?
    /// Runs once the open is answered: work the opener need not wait for.
    var afterReply: (@Sendable () -> Void)?
    /// The file's bytes are newer than the tree's size for it: the tree must catch up now.
    var treeIsBehind = false
}

/// What one open file handle (`fuse_file_info.fh`) reads.
enum OpenHandle: Sendable {
    /// An item file the engine reads: media, a side file, an HLS part.
    case item(ItemFileReader)
    /// Bytes made in memory: an `.nfo`, a source's artwork, an HLS playlist or key.
    case memory([UInt8])
    /// A cached HLS stream as one file, and the player's playback reading it, if one is.
    case joined(HLSJoinedFile, PlaybackSession?)
}

/// The mount's open files: opens turned into engine readers (`LibraryReader`), reads into
/// one engine call and one reply, and the kernel's side of it: passthrough registration,
/// page-cache flags, eviction at the last close.
final class OpenFiles: Sendable {
    let library: LibraryReader
    private let view: LibraryView
    private let actions: any MountActions
    private let errnos: ErrnoTable
    private let clock: @Sendable () -> Date
    private let logger: Logger
    /// Which media opens read in the kernel, straight from the cache file.
    let passthrough: PassthroughFiles

    private struct Entry {
        var handle: OpenHandle
        var itemID: Int64
        /// Counts as an open of the item: locked against eviction.
        var locksItem: Bool
        /// How an open of the media reads (`PassthroughFiles`).
        var mode: MediaIO?
    }
    private struct Table {
        var files: [UInt64: Entry] = [:]
        var nextHandle: UInt64 = 1
        /// Open handles of each item: an open item is locked against eviction.
        var openItems: [Int64: Int] = [:]
        /// Items `rm`ed while open: evicted at the last close, as unlink waits for it.
        var pendingEvictions: Set<Int64> = []
    }
    private let table = Mutex(Table())

    init(library: LibraryReader, view: LibraryView, actions: any MountActions, errnos: ErrnoTable,
         clock: @escaping @Sendable () -> Date, logger: Logger) {
        self.library = library
        self.view = view
        self.actions = actions
        self.errnos = errnos
        self.clock = clock
        self.logger = logger
        passthrough = PassthroughFiles(logger: logger)
    }

    // MARK: - Open and close

    /// Opens file `fileNumber` of `item` for reading (writes were refused before).
    func open(item: TreeItem, fileNumber: Int, file: FileInfo, readerClass: ReaderClass = .other) -> Result<OpenAnswer, Errno> {
        let entry = item.files[fileNumber]
        var answer = file
        if entry.key == TreeItemFile.sidecarKey {
            // Made from the catalog now: the same bytes the listing's size was counted from.
            guard let nfo = try? view.nfo(itemID: item.id) else { return .failure(.noSuchFileOrDirectory) }
            // Within `refresh` of a sync the tree may still hold the old text's size, where the
            // kernel would cut this reader's copy: it reads past that size, and the tree catches up.
            let behind = nfo.utf8.count != entry.size.map(Int.init)
            answer.directIO = behind
            return .success(OpenAnswer(file: openMemory(Array(nfo.utf8), itemID: item.id, file: answer), treeIsBehind: behind))
        }
        guard entry.isMedia else {
            let reader = library.openSideFile(itemID: item.id, key: entry.key, readerClass: readerClass)
            answer.directIO = reader.size == nil  // short answers mark its end
            answer.handle = add(Entry(handle: .item(reader), itemID: item.id, locksItem: false))
            return .success(OpenAnswer(file: answer))
        }
        // From the tree (rebuilt whenever the store changes): no store read on open.
        if item.licenceHasExpired(at: clock()) { return .failure(.keyExpired) }
        let media = library.openMedia(itemID: item.id, size: Int64(item.size), isCached: item.state == .cached,
                                      hasLicenceExpiry: item.licenceExpiresAt != nil, readerClass: readerClass)
        let mode = passthrough.open(itemID: item.id, whole: media.whole, mayPassThrough: media.mayBypass,
                                    path: media.cacheFilePath)
        answer.keepCache = mode == .pageCache && media.pagesStayValid
        answer.directIO = mode == .direct
        answer.handle = add(Entry(handle: .item(media.reader), itemID: item.id, locksItem: true, mode: mode))
        if case .passthrough(let backing) = mode { return .success(OpenAnswer(file: answer, passthrough: backing)) }
        // The first bytes are on their way while the program gets its open and asks for them.
        // Only after the answer: the transfer thread, woken on this CPU, would otherwise do its
        // connecting before the answer is sent.
        return .success(OpenAnswer(file: answer, afterReply: { media.reader.startFirstWindow() }))
    }

    /// Opens bytes made in memory (an `.nfo`, a source's artwork): not an open of the item.
    func openMemory(_ bytes: [UInt8], itemID: Int64, file: FileInfo) -> FileInfo {
        var answer = file
        answer.handle = add(Entry(handle: .memory(bytes), itemID: itemID, locksItem: false))
        return answer
    }

    /// Adds an open made elsewhere (an HLS playlist, part or one-file view); like the media
    /// it locks the item against eviction while open.
    func register(_ handle: OpenHandle, itemID: Int64, answer file: FileInfo) -> FileInfo {
        if case .item = handle {} else { library.openedItem(itemID: itemID) }
        var answer = file
        answer.handle = add(Entry(handle: handle, itemID: itemID, locksItem: true))
        return answer
    }

    private func add(_ entry: Entry) -> UInt64 {
        table.withLock { table in
            defer { table.nextHandle += 1 }
            table.files[table.nextHandle] = entry
            if entry.locksItem { table.openItems[entry.itemID, default: 0] += 1 }
            return table.nextHandle
        }
    }

    /// The last close of a handle; runs an eviction that waited for it.
    func release(handle: UInt64) {
        let (closed, evict) = table.withLock { table -> (Entry?, Bool) in
            guard let entry = table.files.removeValue(forKey: handle) else { return (nil, false) }
            guard entry.locksItem else { return (entry, false) }
            let left = (table.openItems[entry.itemID] ?? 1) - 1
            table.openItems[entry.itemID] = left > 0 ? left : nil
            return (entry, left == 0 && table.pendingEvictions.remove(entry.itemID) != nil)
        }
        guard let closed else { return }
        if let mode = closed.mode { passthrough.close(itemID: closed.itemID, mode: mode) }
        switch closed.handle {
        case .item(let reader): reader.close()
        case .memory: if closed.locksItem { library.closedItem(itemID: closed.itemID) }
        case .joined(_, let playback):
            playback?.end()
            library.closedItem(itemID: closed.itemID)
        }
        if evict { runEviction(closed.itemID) }
    }

    /// `rm` of an item file: evicts now, or at the last close when the item is open.
    func evict(itemID: Int64) -> Result<Void, Errno> {
        library.forgetPages(itemID: itemID)
        // Refused now as the engine would refuse it at the last close: `rm` of a pinned item
        // that is open elsewhere returned 0 and evicted nothing.
        if table.withLock({ $0.openItems[itemID] != nil }), (try? view.item(id: itemID))??.locked == true {
            return .failure(.notPermitted)
        }
        let deferred = table.withLock { table -> Bool in
            guard table.openItems[itemID] != nil else { return false }
            table.pendingEvictions.insert(itemID)
            return true
        }
        if deferred { return .success(()) }
        do {
            try actions.evict(itemID: itemID)
            return .success(())
        } catch {
            return .failure(errnos.errno(for: error, during: "unlink"))
        }
    }

    private func runEviction(_ itemID: Int64) {
        do {
            try actions.evict(itemID: itemID)
        } catch {
            logger.error("evicting item \(itemID) after its last close failed: \(error)")
        }
    }

    // MARK: - Read

    func read(handle: UInt64, size: Int, offset: Int64, reply: Reply<ReadData>) {
        guard let entry = table.withLock({ $0.files[handle] }) else { return reply.fail(.badFileDescriptor) }
        switch entry.handle {
        case .memory(let bytes):
            let start = Int(min(offset, Int64(bytes.count)))
            reply.succeed(bytes: Array(bytes[start..<min(bytes.count, start + size)]))
        case .joined(let joined, let playback):
            let end = min(offset + Int64(size), joined.size)
            if offset < end { playback?.read(offset: offset, length: end - offset) }
            switch joined.read(offset..<end, library: library) {
            case .success(let bytes): reply.succeed(bytes: bytes)
            case .failure(let errno): reply.fail(errno)
            }
        case .item(let reader):
            reader.read(offset: offset, count: size, onWait: { cancellation in
                reply.request.onInterrupt { cancellation.cancel() }
            }) { [errnos] answer in
                Self.send(answer, to: reply, errnos: errnos)
            }
        }
    }

    private static func send(_ answer: ReadAnswer, to reply: Reply<ReadData>, errnos: ErrnoTable) {
        switch answer {
        case .bytes(let bytes): reply.succeed(bytes: bytes)
        case .memory(let bytes): bytes.withBuffers { reply.succeed(pieces: $0) }
        case .cacheFile(let region):
            withExtendedLifetime(region) { reply.succeed(descriptor: region.descriptor, offset: region.offset, count: region.count) }
        case .failure(let error): reply.fail(errnos.errno(for: error))
        }
    }
}
