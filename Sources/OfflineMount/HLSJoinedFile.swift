import Foundation
import OfflineEngine
import OfflineFUSE
import Synchronization

/// A fully cached HLS stream read as one contiguous file (DESIGN §3): the init segment and
/// the segments end to end, each piece read from its own cache file. Only offered for a
/// `cached` item, so every byte is local; a piece evicted while the file is open reads as `EIO`.
final class HLSJoinedFile: Sendable {
    struct Piece: Sendable {
        var resource: CacheFileKey
        var path: String
        /// Where the piece's bytes are in its cache file.
        var cacheRange: Range<Int64>
        /// Where they are in the joined file.
        var start: Int64
    }

    let itemID: Int64
    let pieces: [Piece]
    let size: Int64
    private let descriptors = Mutex<[String: Int32]>([:])  // protected: cache files opened so far (leaf lock)

    /// The layout of `stream` from the sizes of its cache files; nil while any is unknown.
    init?(stream: HLSStream, library: LibraryReader) {
        var pieces: [Piece] = []
        var offset: Int64 = 0
        let ordered = stream.mainParts.map { stream.parts[$0] }
        for part in ordered {
            let range: Range<Int64>
            if let slice = part.range {
                range = slice
            } else {
                guard let size = library.knownSize(itemID: stream.itemID, key: part.resource) else { return nil }
                range = 0..<size
            }
            pieces.append(Piece(resource: part.resource, path: library.cacheFilePath(itemID: stream.itemID, key: part.resource),
                                cacheRange: range, start: offset))
            offset += Int64(range.count)
        }
        itemID = stream.itemID
        self.pieces = pieces
        size = offset
    }

    deinit {
        for fd in descriptors.withLock({ Array($0.values) }) { close(fd) }
    }

    /// Bytes `range` of the joined file (cut at its end), copied from the pieces it spans.
    func read(_ range: Range<Int64>, library: LibraryReader) -> Result<[UInt8], Errno> {
        let wanted = range.lowerBound..<min(range.upperBound, size)
        guard !wanted.isEmpty else { return .success([]) }
        var bytes = [UInt8](repeating: 0, count: Int(wanted.count))
        // The last piece starting at or before the first byte.
        var index = pieces.partitionPoint { $0.start > wanted.lowerBound } - 1
        var filled = 0
        while filled < bytes.count, index >= 0, index < pieces.count {
            let piece = pieces[index]
            let position = wanted.lowerBound + Int64(filled)
            let inPiece = position - piece.start
            let count = min(Int64(bytes.count - filled), Int64(piece.cacheRange.count) - inPiece)
            let cacheStart = piece.cacheRange.lowerBound + inPiece
            guard count > 0 else { index += 1; continue }
            guard library.isAvailable(itemID: itemID, key: piece.resource, range: ByteRange(cacheStart, cacheStart + count)),
                  let fd = descriptor(piece.path) else { return .failure(.ioError) }
            let got = bytes.withUnsafeMutableBytes { buffer in
                pread(fd, buffer.baseAddress! + filled, Int(count), off_t(cacheStart))
            }
            guard got == Int(count) else { return .failure(.ioError) }
            filled += got
            index += 1
        }
        return .success(bytes)
    }

    private func descriptor(_ path: String) -> Int32? {
        descriptors.withLock { open in
            if let fd = open[path] { return fd }
            let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { return nil }
            open[path] = fd
            return fd
        }
    }
}
