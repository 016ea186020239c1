#if canImport(Glibc)
import Glibc
#endif
import CFuseShim

/// A point in time with nanoseconds, as `struct timespec` holds it.
public struct Timestamp: Hashable, Sendable, Comparable {
    public var seconds: Int
    public var nanoseconds: Int

    public init(seconds: Int, nanoseconds: Int = 0) {
        self.seconds = seconds
        self.nanoseconds = nanoseconds
    }

    /// The wall-clock time now (`CLOCK_REALTIME`).
    public static func now() -> Timestamp {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Timestamp(seconds: spec.tv_sec, nanoseconds: spec.tv_nsec)
    }

    public static func < (a: Timestamp, b: Timestamp) -> Bool {
        (a.seconds, a.nanoseconds) < (b.seconds, b.nanoseconds)
    }

    var cValue: timespec { timespec(tv_sec: seconds, tv_nsec: nanoseconds) }
}

/// The attributes of a file as the kernel caches them (`struct stat`).
public struct FileAttributes: Hashable, Sendable {
    /// File type and permission bits together, e.g. `S_IFREG | 0o644`.
    public var mode: UInt32
    public var inode: UInt64
    public var linkCount: UInt64 = 1
    public var uid: UInt32 = 0
    public var gid: UInt32 = 0
    public var rdev: UInt64 = 0
    /// The exact size in bytes: reads through the page cache are cut at this size.
    public var size: UInt64 = 0
    /// Allocated 512-byte blocks (`du` shows these).
    public var blocks: UInt64 = 0
    public var blockSize: Int = 4096
    public var accessTime = Timestamp(seconds: 0)
    public var modificationTime = Timestamp(seconds: 0)
    public var changeTime = Timestamp(seconds: 0)

    public init(inode: UInt64, mode: UInt32) {
        self.inode = inode
        self.mode = mode
    }

    /// A regular file with the given permission bits.
    public static func file(inode: UInt64, permissions: UInt32 = 0o644, size: UInt64) -> FileAttributes {
        var attributes = FileAttributes(inode: inode, mode: UInt32(Glibc.S_IFREG) | permissions)
        attributes.size = size
        attributes.blocks = (size + 511) / 512
        return attributes
    }

    /// A directory with the given permission bits (link count 2: itself and `.`).
    public static func directory(inode: UInt64, permissions: UInt32 = 0o755) -> FileAttributes {
        var attributes = FileAttributes(inode: inode, mode: UInt32(Glibc.S_IFDIR) | permissions)
        attributes.linkCount = 2
        return attributes
    }

    /// Sets the three times at once.
    public mutating func setTimes(_ time: Timestamp) {
        accessTime = time
        modificationTime = time
        changeTime = time
    }

    var stat: stat {
        var result = Glibc.stat()
        result.st_ino = UInt(inode)
        result.st_mode = mode
        result.st_nlink = UInt(linkCount)
        result.st_uid = uid
        result.st_gid = gid
        result.st_rdev = UInt(rdev)
        result.st_size = Int(truncatingIfNeeded: size)
        result.st_blocks = Int(truncatingIfNeeded: blocks)
        result.st_blksize = blockSize
        result.st_atim = accessTime.cValue
        result.st_mtim = modificationTime.cValue
        result.st_ctim = changeTime.cValue
        return result
    }
}
