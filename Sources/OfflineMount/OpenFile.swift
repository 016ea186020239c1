import Foundation
import OfflineEngine
import Synchronization

/// One open item file (a `fuse_file_info.fh`): what it is, its cache file descriptor and the
/// reader's pattern for read-ahead (the engine's `ReadPattern`).
///
/// A reference type so that a read answered later on an engine thread keeps the descriptor
/// open until its reply is sent, whatever `release` does meanwhile.
final class OpenFile: Sendable {
    let itemID: Int64
    /// The file number in the inode (0: the media).
    let fileNumber: Int
    let key: CacheFileKey
    /// The size reads are cut at; `nil` for a side file whose size is not known yet (opened
    /// `direct_io`, so short answers mark the end).
    let size: Int64?
    let path: String
    /// Where the file's byte 0 is in the cache file (an HLS part that is a byte range of the
    /// file its URL names); 0 otherwise.
    let baseOffset: Int64
    /// Contents served from memory instead of a cache file (an HLS item's local playlist).
    let memory: [UInt8]?
    /// A fully cached HLS stream read as one file (its pieces are other cache files).
    let joined: HLSJoinedFile?
    /// Offset of this file's byte 0 in the item's media, for `playback`; nil: reads of it are
    /// not playback (thumbnails, subtitles, keys, playlists).
    let playbackOffset: Int64?
    /// Who opened it: a scanner gets no read-ahead (it reads pieces, and should fetch no more);
    /// only a player's reads are playback.
    let readerClass: ReaderClass
    /// A player's open of the media: told every read, ended at the last close.
    let playback: PlaybackSession?
    /// A scanner's open of the media: the uncached bytes it may have (policy `scanner-reads`).
    let scannerReads: ScannerReads?

    private let pattern: Mutex<ReadPattern>  // leaf lock
    /// The last prefetches asked for this reader, cancelled at its close (older ones have
    /// their bytes by then: prefetches run in order).
    private let prefetches = Mutex<[any FetchTicket]>([])  // leaf lock
    private let descriptor = Mutex<Int32>(-1)  // protected: the cache file, opened at first use (leaf lock)

    init(itemID: Int64, fileNumber: Int, key: CacheFileKey, size: Int64?, path: String, baseOffset: Int64 = 0,
         memory: [UInt8]? = nil, joined: HLSJoinedFile? = nil, playbackOffset: Int64? = nil,
         readerClass: ReaderClass = .other, playback: PlaybackSession? = nil, scannerReads: ScannerReads? = nil) {
        self.itemID = itemID
        self.playback = playback
        self.scannerReads = scannerReads
        self.readerClass = readerClass
        self.fileNumber = fileNumber
        self.key = key
        self.size = size
        self.path = path
        self.baseOffset = baseOffset
        self.memory = memory
        self.joined = joined
        self.playbackOffset = playbackOffset ?? (key == "media" ? 0 : nil)
        pattern = Mutex(ReadPattern(readerClass: readerClass, size: size))
    }

    deinit {
        let fd = descriptor.withLock { $0 }
        if fd >= 0 { close(fd) }
    }

    /// The cache file, opened read-only on first use; `nil` when it cannot be opened.
    func cacheDescriptor() -> Int32? {
        descriptor.withLock { fd in
            if fd < 0 { fd = open(path, O_RDONLY | O_CLOEXEC) }
            return fd >= 0 ? fd : nil
        }
    }

    /// How much to fetch beyond a read at `offset..<end` (`ReadPattern`).
    func readAhead(offset: Int64, end: Int64) -> Int64 {
        pattern.withLock { $0.read(offset: offset, end: end) }
    }

    func keepPrefetch(_ ticket: any FetchTicket) {
        prefetches.withLock { tickets in
            tickets.append(ticket)
            if tickets.count > 2 { tickets.removeFirst() }
        }
    }

    func cancelPrefetches() {
        for ticket in prefetches.withLock({ $0 }) { ticket.cancel() }
    }

    /// The bytes to ask for now ahead of a sequential reader at `end` (`ReadPattern`).
    func prefetch(end: Int64, readAhead: Int64) -> Range<Int64>? {
        pattern.withLock { $0.prefetch(end: end, readAhead: readAhead) }
    }
}
