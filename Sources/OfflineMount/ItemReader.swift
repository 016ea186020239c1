import Dispatch
import Foundation
import Logging
import OfflineEngine
import OfflineFUSE
import Synchronization

// Lock order: `table` is a leaf; `OpenFile`'s locks are leaves; no lock is held while calling
// the byte source, the store or a reply.

/// What an open answers: the file's flags and handle, and the backing file its reads pass
/// through to in the kernel, if they do.
struct OpenAnswer {
    var file: FileInfo
    var passthrough: BackingFile?
    /// Runs once the open is answered: work the opener need not wait for.
    var afterReply: (@Sendable () -> Void)?
}

/// The read path: open files, and reads answered from the cache file (spliced) or, for
/// missing bytes, from the thread that completes the engine's fetch, or `EIO` once the read
/// bound passes. Holds no download logic: it only asks `ItemByteSource`.
final class ItemReader: Sendable {
    private let byteSource: any ItemByteSource
    private let view: LibraryView
    private let actions: any MountActions
    private let errnos: ErrnoTable
    private let readTimeout: Duration
    private let clock: @Sendable () -> Date
    private let logger: Logger
    /// Which media opens read in the kernel, straight from the cache file.
    let passthrough: PassthroughFiles

    private struct Table {
        var files: [UInt64: OpenFile] = [:]
        var nextHandle: UInt64 = 1
        /// Open handles of each item's media: an open item is locked against eviction.
        var openMedia: [Int64: Int] = [:]
        /// Items `rm`ed while open: evicted at the last close, as unlink waits for it.
        var pendingEvictions: Set<Int64> = []
        /// Items whose media was wholly in the cache at their last open. The kernel's pages of
        /// such an item were filled from the bytes that are there now, so the next open may
        /// keep them; the first open that finds the item whole drops them (they may date from a
        /// version of the file fetched before).
        var wholeAtLastOpen: Set<Int64> = []
        /// How each open media handle reads (`PassthroughFiles`).
        var mediaModes: [UInt64: MediaIO] = [:]
    }
    private let table = Mutex(Table())  // protected: the open-file table
    /// Sends the replies of large reads that waited for bytes, off the engine's threads.
    /// Concurrent: each reply is a copy into its reader's pages, and with several readers one
    /// serial queue did all of their copies on one core.
    private let replies = DispatchQueue(label: "offlinefs.read-replies", attributes: .concurrent)
    /// Replies from this size on leave the engine's thread (a small one costs less than the hop).
    static let largeReply: Int64 = 256 << 10

    init(byteSource: any ItemByteSource, view: LibraryView, actions: any MountActions, errnos: ErrnoTable,
         readTimeout: Duration, clock: @escaping @Sendable () -> Date, logger: Logger) {
        self.byteSource = byteSource
        self.view = view
        self.actions = actions
        self.errnos = errnos
        self.readTimeout = readTimeout
        self.clock = clock
        self.logger = logger
        passthrough = PassthroughFiles(logger: logger)
    }

    // MARK: - Open and close

    /// A folder of these items was listed (`ItemByteSource.expectReads`).
    func expectReads(itemIDs: [Int64]) {
        byteSource.expectReads(itemIDs: itemIDs)
    }

    /// Opens file `fileNumber` of `item` for reading (writes were refused before).
    func open(item: TreeItem, fileNumber: Int, file: FileInfo, readerClass: ReaderClass = .other) -> Result<OpenAnswer, Errno> {
        let entry = item.files[fileNumber]
        var answer = file
        let size: Int64?
        var mode: MediaIO?
        if entry.isMedia {
            // From the tree (rebuilt whenever the store changes): no store read on open.
            if item.licenceHasExpired(at: clock()) { return .failure(.keyExpired) }
            size = Int64(item.size)
            let whole = item.state == .cached
                || (item.size > 0 && byteSource.isWhole(itemID: item.id, file: entry.key, range: ByteRange(0, Int64(item.size))))
            // A player's reads say where it is (docs/playback.md): they must reach the mount.
            let unseenReadsAreFine = readerClass != .player && readsNeedNotBeSeen(item)
            let chosen = passthrough.open(itemID: item.id, whole: whole, mayPassThrough: unseenReadsAreFine,
                                          path: byteSource.cacheFilePath(itemID: item.id, file: entry.key))
            mode = chosen
            // A cached item's bytes never change: keep the kernel's pages across opens
            // (invalidated by a notification when the item is evicted or changes). So do those
            // of an item whose every byte was streamed in, from its second open on, so that a
            // re-read does not go through the filesystem before the item is marked `cached`.
            let wasWhole = table.withLock { table -> Bool in
                guard whole else {
                    table.wholeAtLastOpen.remove(item.id)
                    return false
                }
                return !table.wholeAtLastOpen.insert(item.id).inserted
            }
            // Not while a play clock waits for a player's reads: pages kept from a copier's
            // read would answer the player's without the mount seeing them.
            answer.keepCache = chosen == .pageCache && (item.state == .cached || wasWhole) && unseenReadsAreFine
            answer.directIO = chosen == .direct
        } else if entry.key == TreeItemFile.sidecarKey {
            // Made from the catalog now: the same bytes the listing's size was counted from.
            guard let nfo = try? view.nfo(itemID: item.id) else { return .failure(.noSuchFileOrDirectory) }
            return .success(OpenAnswer(file: openMemory(Array(nfo.utf8), itemID: item.id,
                                                        fileNumber: fileNumber, key: entry.key, file: answer)))
        } else {
            size = sideFileSize(itemID: item.id, key: entry.key)
            answer.directIO = size == nil
        }
        let open = OpenFile(itemID: item.id, fileNumber: fileNumber, key: entry.key, size: size,
                            path: byteSource.cacheFilePath(itemID: item.id, file: entry.key), readerClass: readerClass,
                            playback: entry.isMedia && readerClass == .player ? startPlayback(itemID: item.id, size: size) : nil,
                            scannerReads: entry.isMedia && readerClass == .scanner ? view.scannerReads() : nil)
        answer.handle = addHandle(open, locksItem: entry.isMedia, mode: mode)
        if entry.isMedia { byteSource.readerOpened(itemID: item.id) }
        if case .passthrough(let backing)? = mode { return .success(OpenAnswer(file: answer, passthrough: backing)) }
        // A scanner's or prober's first read asks for what it reads, no more.
        guard entry.isMedia, !readerClass.readsPieces else { return .success(OpenAnswer(file: answer)) }
        // The first bytes are on their way while the program gets its open and asks for them.
        // Only after the answer: the transfer thread, woken on this CPU, would otherwise do its
        // connecting before the answer is sent.
        let (byteSource, itemID, key) = (byteSource, item.id, entry.key)
        return .success(OpenAnswer(file: answer, afterReply: { byteSource.startFirstWindow(itemID: itemID, file: key) }))
    }

    /// Whether reads of `item`'s media may bypass the mount: not while a rental's play clock
    /// waits for the first playback (`noteRead` must see the reads). One store read, only for
    /// items with a licence expiry.
    private func readsNeedNotBeSeen(_ item: TreeItem) -> Bool {
        guard item.licenceExpiresAt != nil else { return true }
        return !view.playClockWaitsForReads(itemID: item.id)
    }

    /// Opens a file whose bytes are made in memory (an `.nfo`, a source's artwork): no cache
    /// file, and not counted as an open of the item's media.
    func openMemory(_ bytes: [UInt8], itemID: Int64, fileNumber: Int, key: CacheFileKey, file: FileInfo) -> FileInfo {
        var answer = file
        answer.handle = addHandle(OpenFile(itemID: itemID, fileNumber: max(1, fileNumber), key: key, size: Int64(bytes.count),
                                           path: "", memory: bytes), locksItem: false)
        return answer
    }

    /// A new handle for `open`; `locksItem`: it counts as an open of the item's media (no
    /// eviction meanwhile).
    private func addHandle(_ open: OpenFile, locksItem: Bool, mode: MediaIO? = nil) -> UInt64 {
        table.withLock { table in
            defer { table.nextHandle += 1 }
            table.files[table.nextHandle] = open
            if locksItem { table.openMedia[open.itemID, default: 0] += 1 }
            if let mode { table.mediaModes[table.nextHandle] = mode }
            return table.nextHandle
        }
    }

    /// A player's playback of `itemID` (`PlaybackSession`).
    func startPlayback(itemID: Int64, size: Int64?) -> PlaybackSession? {
        byteSource.startPlayback(itemID: itemID, size: size)
    }

    /// Adds an open file made elsewhere (an HLS playlist, part or one-file view) to the table;
    /// like the media it locks the item against eviction while open.
    func register(_ open: OpenFile, answer file: FileInfo) -> FileInfo {
        var answer = file
        answer.handle = addHandle(open, locksItem: true)
        byteSource.readerOpened(itemID: open.itemID)
        return answer
    }

    /// The last close of a handle; runs an eviction that waited for it.
    func release(handle: UInt64) {
        let (closed, mode, evict) = table.withLock { table -> (OpenFile?, MediaIO?, Bool) in
            guard let file = table.files.removeValue(forKey: handle) else { return (nil, nil, false) }
            let mode = table.mediaModes.removeValue(forKey: handle)
            guard file.fileNumber == 0 else { return (file, mode, false) }
            let left = (table.openMedia[file.itemID] ?? 1) - 1
            table.openMedia[file.itemID] = left > 0 ? left : nil
            return (file, mode, left == 0 && table.pendingEvictions.remove(file.itemID) != nil)
        }
        if let closed, let mode { passthrough.close(itemID: closed.itemID, mode: mode) }
        // Its prefetches wait for nobody now; the engine stops what no one else wants.
        closed?.cancelPrefetches()
        closed?.playback?.end()
        guard let closed, closed.fileNumber == 0 else { return }
        byteSource.readerClosed(itemID: closed.itemID)
        if evict { runEviction(closed.itemID) }
    }

    /// `rm` of an item file: evicts now, or at the last close when the item is open.
    func evict(itemID: Int64) -> Result<Void, Errno> {
        let deferred = table.withLock { table -> Bool in
            table.wholeAtLastOpen.remove(itemID)
            guard table.openMedia[itemID] != nil else { return false }
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

    func openFile(_ handle: UInt64) -> OpenFile? {
        table.withLock { $0.files[handle] }
    }

    /// The cache file of an item's side file (`thumbnail`) once every byte of it is there,
    /// fetched first when needed. Blocking (network, bounded by the read timeout): for
    /// background work only.
    func wholeSideFile(itemID: Int64, key: CacheFileKey) -> String? {
        var size = byteSource.knownSize(itemID: itemID, file: key)
        if size == nil {
            let learned = DispatchSemaphore(value: 0)
            byteSource.learnSizes(itemID: itemID, files: [key]) { learned.signal() }
            _ = learned.wait(timeout: .now() + .seconds(Int(readTimeout.components.seconds) + 1))
            size = byteSource.knownSize(itemID: itemID, file: key)
        }
        guard let size, size > 0, size <= 32 << 20 else { return nil }
        let range = ByteRange(0, size)
        if !byteSource.isAvailable(itemID: itemID, file: key, range: range) {
            let fetched = DispatchSemaphore(value: 0)
            byteSource.whenAvailable(itemID: itemID, file: key, range: range, readAhead: 0,
                                     deadline: ContinuousClock.now + readTimeout) { _ in fetched.signal() }
            _ = fetched.wait(timeout: .now() + .seconds(Int(readTimeout.components.seconds) + 1))
        }
        guard byteSource.isWhole(itemID: itemID, file: key, range: range) else { return nil }
        return byteSource.cacheFilePath(itemID: itemID, file: key)
    }

    /// A side file's size once it is wholly in the cache, else `nil`: the total the engine
    /// learned from the origin, when every byte of it is present. (The cache file's length
    /// does not say: after a read of its start only, it ends where that read ended.)
    func sideFileSize(itemID: Int64, key: CacheFileKey) -> Int64? {
        guard let total = byteSource.knownSize(itemID: itemID, file: key), total > 0,
              byteSource.isAvailable(itemID: itemID, file: key, range: ByteRange(0, total)) else { return nil }
        return total
    }

    // MARK: - Read

    func read(_ file: OpenFile, size: Int, offset: Int64, reply: Reply<ReadData>) {
        let wanted = offset + Int64(size)
        let end = file.size.map { min(wanted, $0) } ?? wanted
        guard offset < end else {
            reply.succeed(bytes: [])
            return
        }
        // Only a player's reads are playback: a backup, `file` or a thumbnailer must not start a
        // rental's play clock or move a resume point.
        if let playback = file.playback, let base = file.playbackOffset {
            playback.read(offset: base + offset, length: end - offset)
        }
        if let memory = file.memory {
            reply.succeed(bytes: Array(memory[Int(offset)..<Int(end)]))
            return
        }
        if let joined = file.joined {
            switch joined.read(offset..<end, byteSource: byteSource) {
            case .success(let bytes): reply.succeed(bytes: bytes)
            case .failure(let errno): reply.fail(errno)
            }
            return
        }
        // An HLS byte-range part is a window on its URL's cache file.
        let range = ByteRange(file.baseOffset + offset, file.baseOffset + end)
        // A file opened before its size was known (`direct_io`): a read at its end, once the
        // engine knows where that is, is the end of file. Its cache file may not exist yet
        // (the bytes wait in memory for their block to be written).
        if file.size == nil, let known = byteSource.knownSize(itemID: file.itemID, file: file.key), range.start >= known {
            reply.succeed(bytes: [])
            return
        }
        let readAhead = file.readAhead(offset: offset, end: end)
        defer { prefetch(file, end: end, readAhead: readAhead) }
        // Bytes that arrived moments ago are still in memory, whether or not they are in the
        // cache file yet (whose copy may be on the disk only, written past the page cache).
        if let inMemory = byteSource.bytesInMemory(itemID: file.itemID, file: file.key, range: range) {
            inMemory.withBuffers { reply.succeed(pieces: $0) }
            return
        }
        if byteSource.isAvailable(itemID: file.itemID, file: file.key, range: range) {
            answerFromCacheFile(file, range, reply)
            return
        }

        // A thumbnailer or an indexer gets the uncached bytes `scanner-reads` allows, and an
        // error at once for the rest (it then describes the file from what it has).
        if let limit = file.scannerReads, !limit.allows(offset..<end, size: file.size) {
            reply.fail(.ioError)
            return
        }

        // Missing bytes: register the interrupt first (the binding's rule), then ask the
        // engine; whichever of completion, interrupt and the backstop timer comes first answers.
        let ticket = TicketBox()
        reply.request.onInterrupt {
            ticket.cancel()
            reply.fail(.interrupted)
        }
        let deadline = ContinuousClock.now + readTimeout
        let completion: @Sendable (Result<Void, FetchError>) -> Void = { [self] result in
            switch result {
            case .success where range.count >= Self.largeReply:
                // The completion runs on the engine's transfer thread: a large reply (a copy
                // of up to 1 MiB into the kernel) there would hold up every transfer.
                replies.async { [self] in answer(file, range, reply) }
            case .success: answer(file, range, reply)
            case .failure(let error): reply.fail(errnos.errno(for: error))
            }
        }
        // Answered from memory once all its bytes have arrived, before they are written to
        // the cache file (which happens in whole blocks, or, on a first read, is slow).
        let early: @Sendable (BytesInMemory) -> Void = { [replies] bytes in
            if bytes.count >= Self.largeReply {
                replies.async { bytes.withBuffers { reply.succeed(pieces: $0) } }
            } else {
                bytes.withBuffers { reply.succeed(pieces: $0) }
            }
        }
        ticket.set(byteSource.whenAvailable(itemID: file.itemID, file: file.key, range: range, readAhead: readAhead,
                                            deadline: deadline, bytes: early, completion: completion))
        guard !reply.isAnswered else { return }
        // The engine promises an answer by the deadline; a request must never hang even if it
        // does not keep that promise.
        let backstop = readTimeout + .milliseconds(500)
        let (seconds, attoseconds) = backstop.components
        // The item's id only, not the open file: the timer must not hold its descriptor.
        DispatchQueue.global().asyncAfter(deadline: .now() + Double(seconds) + Double(attoseconds) / 1e18) { [logger, itemID = file.itemID] in
            guard !reply.isAnswered else { return }
            ticket.cancel()
            reply.fail(.ioError)
            logger.warning("read of item \(itemID) \(range) not answered by the engine within the bound; answered EIO")
        }
    }

    /// Asks early for the bytes a sequential reader will want next (see `OpenFile.prefetch`).
    /// Nobody waits on them: a failure shows at the read that needs them.
    private func prefetch(_ file: OpenFile, end: Int64, readAhead: Int64) {
        guard let next = file.prefetch(end: end, readAhead: readAhead) else { return }
        let range = ByteRange(file.baseOffset + next.lowerBound, file.baseOffset + next.upperBound)
        guard !byteSource.isAvailable(itemID: file.itemID, file: file.key, range: range) else { return }
        // Done once the bytes have arrived (`bytes`), in the file yet or not: a prefetch must
        // not make the engine write a part-filled block early.
        file.keepPrefetch(byteSource.whenAvailable(itemID: file.itemID, file: file.key, range: range, readAhead: 0,
                                                   deadline: ContinuousClock.now + readTimeout, bytes: { _ in },
                                                   completion: { _ in }))
    }

    /// Answers bytes that are in the cache file: from memory while they still are (the file's
    /// copy may be on the disk only), else from the file.
    private func answer(_ file: OpenFile, _ range: ByteRange, _ reply: Reply<ReadData>) {
        if let inMemory = byteSource.bytesInMemory(itemID: file.itemID, file: file.key, range: range) {
            inMemory.withBuffers { reply.succeed(pieces: $0) }
            return
        }
        answerFromCacheFile(file, range, reply)
    }

    /// Answers from the cache file: spliced when the size is known (a page-cache read must be
    /// answered in full), else copied, short at the end (`direct_io`).
    private func answerFromCacheFile(_ file: OpenFile, _ range: ByteRange, _ reply: Reply<ReadData>) {
        guard let fd = file.cacheDescriptor() else {
            let error = POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            reply.fail(errnos.errno(for: error, during: "read (opening the cache file)", about: file.path))
            return
        }
        if file.size != nil {
            withExtendedLifetime(file) { reply.succeed(descriptor: fd, offset: range.start, count: Int(range.count)) }
            return
        }
        var buffer = [UInt8](repeating: 0, count: Int(range.count))
        let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(range.start)) }
        guard count >= 0 else {
            reply.fail(Errno(errno))
            return
        }
        buffer.removeLast(buffer.count - count)
        reply.succeed(bytes: buffer)
    }
}

/// The fetch a waiting read holds, cancellable from the interrupt handler or the backstop
/// even before `whenAvailable` has returned it.
private final class TicketBox: Sendable {
    private struct State {
        var ticket: (any FetchTicket)?
        var cancelled = false
    }
    private let state = Mutex(State())  // leaf lock

    func set(_ ticket: any FetchTicket) {
        let cancelNow = state.withLock { state -> Bool in
            state.ticket = ticket
            return state.cancelled
        }
        if cancelNow { ticket.cancel() }
    }

    func cancel() {
        let ticket = state.withLock { state -> (any FetchTicket)? in
            state.cancelled = true
            return state.ticket
        }
        ticket?.cancel()
    }
}
