#if canImport(Glibc)
import Glibc
#endif
import CFuseShim

/// The answer to a name lookup (`struct fuse_entry_param`): which inode a name is, and how long
/// the kernel may cache the name and the attributes.
///
/// A successful entry reply to `lookup`, `mknod`, `mkdir`, `symlink`, `link` or `create`, and
/// every entry but `.`/`..` sent by `readdirplus`, adds one to the kernel's lookup count of
/// the inode; `forget` takes them back.
public struct Entry: Hashable, Sendable {
    /// The inode number; 0 makes a negative entry ("no such name", cached for `entryTimeout`).
    public var inode: UInt64
    /// Distinguishes a reused inode number from its earlier life (NFS export).
    public var generation: UInt64
    public var attributes: FileAttributes
    /// Seconds the kernel may trust `attributes`.
    public var attributeTimeout: Double
    /// Seconds the kernel may trust the name → inode mapping (or its absence).
    public var entryTimeout: Double

    public init(attributes: FileAttributes, generation: UInt64 = 0,
                attributeTimeout: Double = 1, entryTimeout: Double = 1) {
        self.inode = attributes.inode
        self.generation = generation
        self.attributes = attributes
        self.attributeTimeout = attributeTimeout
        self.entryTimeout = entryTimeout
    }

    /// A cached "no such name": the kernel answers `ENOENT` itself for `timeout` seconds
    /// instead of asking again (libfuse's `passthrough_hp` does this for misses).
    public static func negative(timeout: Double) -> Entry {
        var entry = Entry(attributes: FileAttributes(inode: 0, mode: 0), attributeTimeout: 0, entryTimeout: timeout)
        entry.inode = 0
        return entry
    }

    /// `true` for an entry made by `negative(timeout:)`.
    public var isNegative: Bool { inode == 0 }

    var param: fuse_entry_param {
        var param = fuse_entry_param()
        param.ino = inode
        param.generation = generation
        param.attr = attributes.stat
        param.attr_timeout = attributeTimeout
        param.entry_timeout = entryTimeout
        return param
    }
}

/// The answer to `create`: the new name's entry and the opened file.
public struct CreatedFile: Hashable, Sendable {
    public var entry: Entry
    public var file: FileInfo

    public init(entry: Entry, file: FileInfo) {
        self.entry = entry
        self.file = file
    }
}
