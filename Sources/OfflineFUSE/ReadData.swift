#if canImport(Glibc)
import Glibc
#endif
import CFuseShim

/// What a `read` answers with: bytes in memory, or a range of an open file that libfuse
/// splices into `/dev/fuse` without copying through the process (the fast path for cached
/// data).
///
/// A read through the page cache must be answered in full (up to end of file): the kernel
/// zero-fills a short answer unless the file was opened `directIO`.
public enum ReadData: Sendable {
    case bytes([UInt8])
    /// `count` bytes of `descriptor` from `offset`, read with `pread` or `splice`; the
    /// descriptor must stay open until `succeed` returns.
    case file(descriptor: Int32, offset: Int64, count: Int)
}

extension Reply where Value == ReadData {
    /// Answers `read`.
    public func succeed(_ data: ReadData) {
        switch data {
        case .bytes(let bytes):
            succeed(bytes: bytes)
        case .file(let descriptor, let offset, let count):
            succeed(descriptor: descriptor, offset: offset, count: count)
        }
    }

    /// Answers `read` with bytes in memory.
    public func succeed(bytes: [UInt8]) {
        bytes.withUnsafeBytes { succeed(bytes: $0) }
    }

    /// Answers `read` with bytes in memory, copied into the reply before this returns.
    public func succeed(bytes: UnsafeRawBufferPointer) {
        send(.bytes(Array(bytes))) { fuse_reply_buf($0, bytes.baseAddress, bytes.count) }
    }

    /// Answers `read` with several pieces of memory, in order, copied into the reply before
    /// this returns (no copy into one buffer first).
    public func succeed(pieces: [UnsafeRawBufferPointer]) {
        var vectors = pieces.map { iovec(iov_base: UnsafeMutableRawPointer(mutating: $0.baseAddress), iov_len: $0.count) }
        send(.bytes(pieces.flatMap { Array($0) })) { request in vectors.withUnsafeMutableBufferPointer { fuse_reply_iov(request, $0.baseAddress, Int32($0.count)) } }
    }

    /// Answers `read` with `count` bytes of an open file from `offset`: spliced when the kernel
    /// allows it (`FUSE_CAP_SPLICE_WRITE`), else read by libfuse into a buffer. A file shorter
    /// than `offset + count` gives a short answer.
    public func succeed(descriptor: Int32, offset: Int64, count: Int) {
        var buffer = cfuse_bufvec_fd(descriptor, count, off_t(offset))
        send(.bytes(Self.readBack(descriptor, offset: offset, count: count))) { fuse_reply_data($0, &buffer, FUSE_BUF_SPLICE_MOVE) }
    }

    /// The bytes a splice from `descriptor` would send, read now: a direct request's answer
    /// must not outlive the descriptor. Short at the end of the file, as a splice is.
    private static func readBack(_ descriptor: Int32, offset: Int64, count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let n = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress! + filled, count - filled, off_t(offset) + off_t(filled)) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            filled += n
        }
        return Array(bytes.prefix(filled))
    }
}
