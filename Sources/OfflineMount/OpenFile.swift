import Foundation
import OfflineEngine
import Synchronization

/// One open item file (a `fuse_file_info.fh`): what it is, its cache file descriptor and the
/// reader's pattern for read-ahead.
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
    /// Offset of this file's byte 0 in the item's media, for the licence play clock (`noteRead`);
    /// nil: reads of it are not playback (thumbnails, subtitles, keys, playlists).
    let playbackOffset: Int64?

    private struct Pattern {
        var nextOffset: Int64 = -1
        var readAhead: Int64 = 0
    }
    private let pattern = Mutex(Pattern())  // protected: sequential-read detection (leaf lock)
    private let descriptor = Mutex<Int32>(-1)  // protected: the cache file, opened at first use (leaf lock)

    /// Read-ahead for the first sequential read, doubled on each next one up to `maxReadAhead`.
    static let firstReadAhead: Int64 = 256 << 10
    static let maxReadAhead: Int64 = 16 << 20

    init(itemID: Int64, fileNumber: Int, key: CacheFileKey, size: Int64?, path: String, baseOffset: Int64 = 0,
         memory: [UInt8]? = nil, joined: HLSJoinedFile? = nil, playbackOffset: Int64? = nil) {
        self.itemID = itemID
        self.fileNumber = fileNumber
        self.key = key
        self.size = size
        self.path = path
        self.baseOffset = baseOffset
        self.memory = memory
        self.joined = joined
        self.playbackOffset = playbackOffset ?? (key == "media" ? 0 : nil)
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

    /// How much to fetch beyond a read at `offset..<end`: a reader that continues where it
    /// stopped gets a growing read-ahead; a jump resets it (the fetcher then starts a new
    /// range instead of filling the gap).
    func readAhead(offset: Int64, end: Int64) -> Int64 {
        pattern.withLock { pattern in
            if offset == pattern.nextOffset {
                pattern.readAhead = min(max(pattern.readAhead * 2, Self.firstReadAhead), Self.maxReadAhead)
            } else {
                pattern.readAhead = offset == 0 ? Self.firstReadAhead : 0
            }
            pattern.nextOffset = end
            return pattern.readAhead
        }
    }
}
