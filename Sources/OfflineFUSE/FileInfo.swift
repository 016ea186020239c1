#if canImport(Glibc)
import Glibc
#endif
import CFuseShim

/// An open file or directory as a request describes it: a copy of `struct fuse_file_info`.
///
/// `open`, `opendir` and `create` receive the kernel's values and answer with a (changed) copy:
/// `handle` and the output flags `directIO`, `keepCache`, `nonSeekable`, `cacheDirectory` are
/// what the reply sets. Other requests receive the values the open reply set.
public struct FileInfo: Hashable, Sendable {
    /// The `open(2)` flags (`O_RDONLY`, `O_WRONLY`, `O_TRUNC` …).
    public var flags: Int32
    /// The filesystem's own handle for the open file (`fh`), chosen in the open reply.
    public var handle: UInt64
    /// Bypass the page cache: reads go to the filesystem and may be short (status files).
    public var directIO: Bool
    /// Keep the kernel's cached data of this file across opens (cached media).
    public var keepCache: Bool
    /// The file cannot be seeked (`lseek` fails with `ESPIPE`).
    public var nonSeekable: Bool
    /// `opendir` only: let the kernel cache this directory's entries.
    public var cacheDirectory: Bool
    /// A write comes from the page cache's writeback; the request's uid/gid/pid are not the writer's.
    public var isWritepage: Bool
    /// `release`/`flush` only: set when the close should also flush.
    public var isFlush: Bool
    /// The lock owner id (for `flush` and lock requests).
    public var lockOwner: UInt64

    public init(flags: Int32 = 0, handle: UInt64 = 0, directIO: Bool = false, keepCache: Bool = false,
                nonSeekable: Bool = false, cacheDirectory: Bool = false) {
        self.flags = flags
        self.handle = handle
        self.directIO = directIO
        self.keepCache = keepCache
        self.nonSeekable = nonSeekable
        self.cacheDirectory = cacheDirectory
        self.isWritepage = false
        self.isFlush = false
        self.lockOwner = 0
    }

    /// Copies the C structure; the pointer is valid only during the callback.
    init(_ info: fuse_file_info) {
        self.flags = info.flags
        self.handle = info.fh
        self.directIO = info.direct_io != 0
        self.keepCache = info.keep_cache != 0
        self.nonSeekable = info.nonseekable != 0
        self.cacheDirectory = info.cache_readdir != 0
        self.isWritepage = info.writepage != 0
        self.isFlush = info.flush != 0
        self.lockOwner = info.lock_owner
    }

    init?(_ pointer: UnsafeMutablePointer<fuse_file_info>?) {
        guard let pointer else { return nil }
        self.init(pointer.pointee)
    }

    /// The access mode requested: `O_RDONLY`, `O_WRONLY` or `O_RDWR`.
    public var accessMode: Int32 { flags & O_ACCMODE }

    /// `true` when the file was opened for writing (`O_WRONLY` or `O_RDWR`).
    public var isWritable: Bool { accessMode != O_RDONLY }

    var cValue: fuse_file_info {
        var info = fuse_file_info()
        info.flags = flags
        info.fh = handle
        info.direct_io = directIO ? 1 : 0
        info.keep_cache = keepCache ? 1 : 0
        info.nonseekable = nonSeekable ? 1 : 0
        info.cache_readdir = cacheDirectory ? 1 : 0
        info.lock_owner = lockOwner
        return info
    }
}
