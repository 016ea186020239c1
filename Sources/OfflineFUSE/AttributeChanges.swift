#if canImport(Glibc)
import Glibc
#endif
import CFuseShim

/// What a `setattr` request asks to change (`chmod`, `chown`, `truncate`, `utimens`); `nil`
/// fields stay as they are.
public struct AttributeChanges: Hashable, Sendable {
    /// A requested time: a given value or "now" (`touch` without a time).
    public enum Time: Hashable, Sendable {
        case now
        case at(Timestamp)
    }

    /// New permission bits (and type bits as the kernel sends them).
    public var mode: UInt32?
    public var uid: UInt32?
    public var gid: UInt32?
    /// New size: `truncate`, or `O_TRUNC` when atomic open truncation is off.
    public var size: UInt64?
    public var accessTime: Time?
    public var modificationTime: Time?
    /// The raw `FUSE_SET_ATTR_*` mask, for bits this type does not name.
    public var mask: Int32

    public init(mode: UInt32? = nil, uid: UInt32? = nil, gid: UInt32? = nil, size: UInt64? = nil,
                accessTime: Time? = nil, modificationTime: Time? = nil, mask: Int32 = 0) {
        self.mode = mode
        self.uid = uid
        self.gid = gid
        self.size = size
        self.accessTime = accessTime
        self.modificationTime = modificationTime
        self.mask = mask
    }

    init(_ attr: stat, mask: Int32) {
        func has(_ bit: Int32) -> Bool { mask & bit != 0 }
        self.init(mask: mask)
        if has(FUSE_SET_ATTR_MODE) { mode = attr.st_mode }
        if has(FUSE_SET_ATTR_UID) { uid = attr.st_uid }
        if has(FUSE_SET_ATTR_GID) { gid = attr.st_gid }
        if has(FUSE_SET_ATTR_SIZE) { size = UInt64(max(0, attr.st_size)) }
        if has(FUSE_SET_ATTR_ATIME_NOW) {
            accessTime = .now
        } else if has(FUSE_SET_ATTR_ATIME) {
            accessTime = .at(Timestamp(seconds: attr.st_atim.tv_sec, nanoseconds: attr.st_atim.tv_nsec))
        }
        if has(FUSE_SET_ATTR_MTIME_NOW) {
            modificationTime = .now
        } else if has(FUSE_SET_ATTR_MTIME) {
            modificationTime = .at(Timestamp(seconds: attr.st_mtim.tv_sec, nanoseconds: attr.st_mtim.tv_nsec))
        }
    }

    /// `true` when nothing the type names is asked (e.g. only a ctime update).
    public var isEmpty: Bool {
        mode == nil && uid == nil && gid == nil && size == nil && accessTime == nil && modificationTime == nil
    }
}
