import Dispatch
import Foundation
import Logging
import OfflineEngine
import OfflineFUSE
import Synchronization

/// The HLS side of the mount (DESIGN §3), translated from the engine's `HLSStreams`:
/// - an HLS item's file is its local playlist, whose URIs are `.hls/<item id>/<part>`;
/// - `<folder>/.hls/<item id>/` lists the parts of the item's chosen rendition (segments,
///   init segment, key), read like any item file through the byte source;
/// - a fully cached stream is also one contiguous file (`HLSJoinedFile`).
///
/// A playlist opened before any rendition was chosen (nobody downloaded the item) is
/// resolved by the engine first, answering the open within the read bound.
///
/// Lock order: `playlists` and `joinedFiles` are leaves.
final class HLSFiles: Sendable {
    private let streams: HLSStreams
    private let library: LibraryReader
    private let view: LibraryView
    private let readTimeout: Duration
    private let clock: @Sendable () -> Date
    private let logger: Logger
    /// Rendered playlists and one-file layouts, per stream (a new choice renders anew).
    private let playlists = Mutex<[Int64: (stream: ObjectIdentifier, bytes: [UInt8])]>([:])
    private let joinedFiles = Mutex<[Int64: (stream: ObjectIdentifier, file: HLSJoinedFile)]>([:])

    init(streams: HLSStreams, library: LibraryReader, view: LibraryView, readTimeout: Duration,
         clock: @escaping @Sendable () -> Date, logger: Logger) {
        self.logger = logger
        self.streams = streams
        self.library = library
        self.view = view
        self.readTimeout = readTimeout
        self.clock = clock
    }

    /// The folder a playlist's URIs point into, relative to the folder it is listed in.
    static func folder(itemID: Int64) -> String { ".hls/\(itemID)" }

    func stream(itemID: Int64) -> HLSStream? { streams.stream(itemID: itemID) }

    // MARK: - Sizes and names

    /// The local playlist's text, once a rendition is chosen.
    func playlist(itemID: Int64) -> [UInt8]? {
        guard let stream = stream(itemID: itemID) else { return nil }
        let id = ObjectIdentifier(stream)
        if let cached = playlists.withLock({ $0[itemID] }), cached.stream == id { return cached.bytes }
        let bytes = Array(stream.localPlaylist(folder: Self.folder(itemID: itemID)).utf8)
        playlists.withLock { $0[itemID] = (id, bytes) }
        return bytes
    }

    /// A part's size when known: its byte range, or its file's size once the origin told it.
    func size(of part: HLSPart, itemID: Int64) -> Int64? {
        if let range = part.range { return Int64(range.count) }
        if case .playlist(let track) = part.kind, let stream = stream(itemID: itemID) {
            return Int64(stream.trackPlaylists[track].count)
        }
        return library.knownSize(itemID: itemID, key: part.resource)
    }

    /// The one-file view of a cached stream, once every piece's size is known.
    func joinedFile(itemID: Int64) -> HLSJoinedFile? {
        guard let stream = stream(itemID: itemID), stream.offersOneFile else { return nil }
        let id = ObjectIdentifier(stream)
        if let cached = joinedFiles.withLock({ $0[itemID] }), cached.stream == id { return cached.file }
        guard let file = HLSJoinedFile(stream: stream, library: library) else { return nil }
        joinedFiles.withLock { $0[itemID] = (id, file) }
        return file
    }

    /// The extension of the one-file view (`ts`, `mp4`) of a stream that can be one file.
    func joinedExtension(itemID: Int64) -> String? {
        guard let stream = stream(itemID: itemID), stream.offersOneFile else { return nil }
        return stream.container?.rawValue
    }

    /// `.hls/<id>/` as a folder: the stream's parts (empty until a rendition is chosen).
    func folder(_ inode: UInt64, parent: UInt64, itemID: Int64) -> TreeFolder {
        var folder = TreeFolder(inode: inode, parent: parent)
        for (index, part) in (stream(itemID: itemID)?.parts ?? []).prefix(NodeID.maxHLSParts).enumerated() {
            folder.add(TreeChild(name: FileName(part.name), inode: NodeID.hlsPart(itemID: itemID, part: index).inode,
                                 isDirectory: false))
        }
        return folder
    }

    /// Learns the sizes of the item's parts that have no byte range and were never fetched
    /// (a `HEAD` each, `RangeFetcher.learnSizes`), then calls `then`, once: when all have
    /// answered, or at the read bound. Copiers (`rsync`, `tar`, `cp`, Samba) list `.hls/<id>/`
    /// and copy exactly the size they see; players open parts by name and never wait on this.
    func learnPartSizes(itemID: Int64, then: @escaping @Sendable () -> Void) {
        guard let stream = stream(itemID: itemID) else { return then() }
        var seen = Set<CacheFileKey>()
        let files = stream.parts.filter { $0.range == nil && !$0.resource.isEmpty && seen.insert($0.resource).inserted }
            .map(\.resource)
        let once = Mutex(false)
        let finish: @Sendable () -> Void = {
            guard once.withLock({ done in defer { done = true }; return !done }) else { return }
            then()
        }
        library.learnSizes(itemID: itemID, keys: files, completion: finish)
        let (seconds, attoseconds) = readTimeout.components
        DispatchQueue.global().asyncAfter(deadline: .now() + Double(seconds) + Double(attoseconds) / 1e18, execute: finish)
    }

    func part(itemID: Int64, index: Int) -> HLSPart? {
        guard let parts = stream(itemID: itemID)?.parts, index < parts.count else { return nil }
        return parts[index]
    }

    /// The inode of the part called `name` in `.hls/<id>/`: one dictionary look-up, as players
    /// look up every segment.
    func partInode(itemID: Int64, named name: String) -> UInt64? {
        guard let number = stream(itemID: itemID)?.partNumber(named: name), number < NodeID.maxHLSParts else { return nil }
        return NodeID.hlsPart(itemID: itemID, part: number).inode
    }

    // MARK: - Open

    /// Opens an HLS item's playlist; resolves the rendition first when none is chosen.
    func openPlaylist(item: TreeItem, file: FileInfo, openFiles: OpenFiles, reply: Reply<FileInfo>) {
        if item.licenceHasExpired(at: clock()) { return reply.fail(.keyExpired) }
        let finish: @Sendable (Result<HLSStream, HLSFailure>) -> Void = { [self] result in
            guard !reply.isAnswered else { return }
            switch result {
            case .failure(let failure):
                logger.error("cannot open the playlist of item \(item.id): \(failure.message)")
                reply.fail(.ioError)
            case .success:
                guard let bytes = playlist(itemID: item.id) else { return reply.fail(.ioError) }
                var answer = file
                answer.directIO = true  // its size changes when a rendition is chosen
                reply.succeed(openFiles.register(.memory(bytes), itemID: item.id, answer: answer))
            }
        }
        streams.withStream(itemID: item.id, completion: finish)
        guard !reply.isAnswered else { return }
        let (seconds, attoseconds) = readTimeout.components
        DispatchQueue.global().asyncAfter(deadline: .now() + Double(seconds) + Double(attoseconds) / 1e18) {
            reply.fail(.ioError)  // nothing when the open was answered
        }
    }

    /// Opens part `index` of an item's stream (a segment, the init segment or the key). A part
    /// whose size the origin has not told yet is opened once its first bytes arrive: players
    /// `fstat` what they open (an MP4 init segment of size 0 does not parse).
    func openPart(item: TreeItem, index: Int, file: FileInfo, openFiles: OpenFiles, readerClass: ReaderClass,
                  reply: Reply<FileInfo>) {
        // Keys and segments alike: nothing of an expired item opens.
        if item.licenceHasExpired(at: clock()) { return reply.fail(.keyExpired) }
        let itemID = item.id
        guard let stream = stream(itemID: itemID), index < stream.parts.count else { return reply.fail(.noSuchFileOrDirectory) }
        let part = stream.parts[index]
        var answer = file
        // Sizes of parts appear as they arrive: reads must not be cut at a size the kernel cached.
        answer.directIO = true
        if part.kind == .key, let key = try? view.hlsKey(itemID: itemID) {
            // The licence server's key (or the playlist's, kept with the licence).
            return reply.succeed(openFiles.register(.memory(Array(key)), itemID: itemID, answer: answer))
        }
        if case .playlist(let track) = part.kind {
            let bytes = stream.trackPlaylists[track]
            return reply.succeed(openFiles.register(.memory(bytes), itemID: itemID, answer: answer))
        }
        var playback: Int64?
        if case .segment(0, let number) = part.kind {
            // Reading past the first segment is playback (the rental's play clock).
            playback = number == 0 ? 0 : LicenceClock.playbackThreshold
        }
        let open: @Sendable () -> Void = { [self, answer, playback] in
            let partReader = library.openPart(itemID: itemID, key: part.resource, size: size(of: part, itemID: itemID),
                                              baseOffset: part.range?.lowerBound ?? 0, playbackOffset: playback,
                                              readerClass: readerClass)
            reply.succeed(openFiles.register(.item(partReader), itemID: itemID, answer: answer))
        }
        if size(of: part, itemID: itemID) != nil { return open() }
        let cancellation = ReadCancellation()
        reply.request.onInterrupt {
            cancellation.cancel()
            reply.fail(.interrupted)
        }
        library.whenStarted(itemID: itemID, key: part.resource, cancellation: cancellation) { started in
            if started { open() } else { reply.fail(.ioError) }
        }
    }

    /// Opens the one-file view of a cached stream.
    func openJoined(item: TreeItem, file: FileInfo, openFiles: OpenFiles, readerClass: ReaderClass) -> Result<FileInfo, Errno> {
        if item.licenceHasExpired(at: clock()) { return .failure(.keyExpired) }
        let itemID = item.id
        guard let joined = joinedFile(itemID: itemID) else { return .failure(.ioError) }
        var answer = file
        // Only listed while cached; an eviction invalidates it. Not for a player, whose reads
        // must reach the mount (docs/playback.md).
        answer.keepCache = readerClass != .player
        let playback = library.startPlayback(itemID: itemID, size: joined.size, readerClass: readerClass)
        return .success(openFiles.register(.joined(joined, playback), itemID: itemID, answer: answer))
    }

}
