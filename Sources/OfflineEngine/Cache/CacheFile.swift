import Foundation
import Glibc
import Synchronization

/// Why a cache file operation failed: the errno, for `ENOSPC` → `no-space`.
struct CacheFileError: Error, Sendable, CustomStringConvertible {
    var errno: Int32
    var operation: String
    var path: String

    var isNoSpace: Bool { errno == ENOSPC || errno == EDQUOT }
    var description: String { "\(operation) \(path): \(String(cString: strerror(errno)))" }
}

/// One sparse cache file, open for the engine's life once first used: bytes land with
/// `pwrite` at their offset (holes stay unallocated) and reach the disk with `fdatasync`.
///
/// The file is made (with its item's folder) by its first write, not when the engine first
/// looks at it. That write comes after the readers its bytes complete were answered from memory
/// (`CachedFile.receive`); making the file earlier, on another thread while the transfer
/// connected, slowed the connect down on a busy two-core machine (0.15–2 ms of file system work).
///
/// Thread-safe: pwrite/pread/fdatasync on one descriptor may run on different threads.
final class CacheFile: Sendable {
    let path: String
    private let descriptor = Mutex<Int32>(-1)  // -1 until first used (leaf lock)
    /// For `writeDirect`: -1 until first used, `unsupported` where `O_DIRECT` is refused.
    private let directDescriptor = Mutex<Int32>(-1)  // leaf lock
    private static let unsupported: Int32 = -2
    /// `O_DIRECT`, which Glibc's Swift module leaves out (it needs `_GNU_SOURCE`); its value
    /// differs between architectures.
    #if arch(x86_64) || arch(i386)
    private static let openDirectFlag: Int32? = 0o40000
    #elseif arch(arm64) || arch(arm)
    private static let openDirectFlag: Int32? = 0o200000
    #else
    private static let openDirectFlag: Int32? = nil
    #endif

    /// Bytes `write` put through the page cache since `releaseWrittenPages` last ran: the pages
    /// a download leaves there (`writeDirect` leaves none).
    private let writtenThroughPageCache = Mutex(RangeSet())

    init(path: String) {
        self.path = path
    }

    deinit {
        for fd in [descriptor.withLock { $0 }, directDescriptor.withLock { $0 }] where fd >= 0 { close(fd) }
    }

    /// The open file, made with its item's folder if missing.
    func open() throws(CacheFileError) -> Int32 {
        try descriptor.withLock { fd throws(CacheFileError) -> Int32 in
            if fd < 0 { fd = try Self.openOrCreate(path) }
            return fd
        }
    }

    private static func openOrCreate(_ path: String) throws(CacheFileError) -> Int32 {
        var fd = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        if fd < 0 && errno == ENOENT {
            // The item's folder (or the cache folder) is made by its first file. Plain mkdir:
            // FileManager's took ~0.1 ms, on the path of a reader's first read of an item.
            let folder = (path as NSString).deletingLastPathComponent
            try makeFolder(folder)
            fd = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        }
        guard fd >= 0 else { throw CacheFileError(errno: errno, operation: "open", path: path) }
        return fd
    }

    /// Makes `folder` and any missing parent.
    private static func makeFolder(_ folder: String) throws(CacheFileError) {
        if mkdir(folder, 0o755) == 0 || errno == EEXIST { return }
        guard errno == ENOENT else { throw CacheFileError(errno: errno, operation: "mkdir", path: folder) }
        let parent = (folder as NSString).deletingLastPathComponent
        guard !parent.isEmpty, parent != folder else { throw CacheFileError(errno: ENOENT, operation: "mkdir", path: folder) }
        try makeFolder(parent)
        if mkdir(folder, 0o755) == 0 || errno == EEXIST { return }
        throw CacheFileError(errno: errno, operation: "mkdir", path: folder)
    }

    /// Writes all of `bytes` at `offset`.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(CacheFileError) {
        guard let base = bytes.baseAddress else { return }
        let fd = try open()
        var done = 0
        while done < bytes.count {
            let written = pwrite(fd, base + done, bytes.count - done, off_t(offset) + off_t(done))
            if written < 0 {
                if errno == EINTR { continue }
                throw CacheFileError(errno: errno, operation: "pwrite", path: path)
            }
            done += written
        }
        writtenThroughPageCache.withLock { $0.insert(offset..<(offset + Int64(bytes.count))) }
    }

    /// Writes `bytes` at `offset` past the page cache (`O_DIRECT`): the caller aligns memory,
    /// offset and length (`StagingBlock.alignment`). Returns false, having written nothing,
    /// where the file system cannot (tmpfs, some FUSE or network file systems): the caller
    /// then writes the plain way, and so does every later call.
    func writeDirect(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(CacheFileError) -> Bool {
        guard let base = bytes.baseAddress, let fd = try openDirect() else { return false }
        var done = 0
        while done < bytes.count {
            let written = pwrite(fd, base + done, bytes.count - done, off_t(offset) + off_t(done))
            if written < 0 {
                if errno == EINTR { continue }
                if errno == EINVAL && done == 0 {
                    directDescriptor.withLock { $0 = Self.unsupported }
                    close(fd)
                    return false
                }
                throw CacheFileError(errno: errno, operation: "pwrite (O_DIRECT)", path: path)
            }
            done += written
        }
        return true
    }

    /// The `O_DIRECT` descriptor, opened at first use; nil where the file system refuses it.
    private func openDirect() throws(CacheFileError) -> Int32? {
        _ = try open()  // makes the file and its folder
        return directDescriptor.withLock { fd -> Int32? in
            if fd == Self.unsupported { return nil }
            if fd < 0 {
                guard let direct = Self.openDirectFlag else {
                    fd = Self.unsupported
                    return nil
                }
                fd = Glibc.open(path, O_WRONLY | O_CLOEXEC | direct)
                if fd < 0 { fd = Self.unsupported }
            }
            return fd >= 0 ? fd : nil
        }
    }

    /// Reads `count` bytes at `offset` (short at end of file).
    func read(at offset: Int64, count: Int) throws(CacheFileError) -> [UInt8] {
        let fd = try open()
        var buffer = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let got = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, count - done, off_t(offset) + off_t(done)) }
            if got < 0 {
                if errno == EINTR { continue }
                throw CacheFileError(errno: errno, operation: "pread", path: path)
            }
            if got == 0 { break }
            done += got
        }
        return Array(buffer[0..<done])
    }

    /// Data written so far reaches the disk (metadata needed to read it back included).
    func sync() throws(CacheFileError) {
        let fd = try open()
        while fdatasync(fd) != 0 {
            if errno == EINTR { continue }
            throw CacheFileError(errno: errno, operation: "fdatasync", path: path)
        }
    }

    /// Asks the kernel to drop the pages `write` put in the page cache, but those of `kept`
    /// (a hint: dirty or mapped pages stay). The pages readers brought in stay.
    func releaseWrittenPages(keeping kept: [Range<Int64>]) {
        let written = writtenThroughPageCache.withLock { ranges in
            defer { ranges = RangeSet() }
            return ranges
        }
        let keep = RangeSet(kept)
        releaseCachedPages(written.ranges.flatMap { keep.gaps(in: $0) })
    }

    /// Asks the kernel to drop the clean pages of `ranges` from its page cache (a hint: dirty
    /// or mapped pages stay), from the start of the page each begins in. The
    /// kernel drops only whole pages of a range: a page split between two ranges would stay
    /// unless the later range takes it (a dirty page stays anyway; a clean one is read again
    /// from the disk if needed).
    func releaseCachedPages(_ ranges: [Range<Int64>]) {
        guard !ranges.isEmpty else { return }
        let fd = descriptor.withLock { $0 }
        guard fd >= 0 else { return }
        for range in ranges where !range.isEmpty {
            let start = range.lowerBound & ~Int64(Self.pageSize - 1)
            _ = posix_fadvise(fd, off_t(start), off_t(range.upperBound - start), POSIX_FADV_DONTNEED)
        }
    }

    private static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

    /// Cuts or extends the file (extension leaves a hole).
    func truncate(to size: Int64) throws(CacheFileError) {
        let fd = try open()
        while ftruncate(fd, off_t(size)) != 0 {
            if errno == EINTR { continue }
            throw CacheFileError(errno: errno, operation: "ftruncate", path: path)
        }
    }

    /// The file's current size.
    func size() throws(CacheFileError) -> Int64 {
        let fd = try open()
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw CacheFileError(errno: errno, operation: "fstat", path: path) }
        return Int64(info.st_size)
    }
}
