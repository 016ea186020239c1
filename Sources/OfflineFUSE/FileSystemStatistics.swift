#if canImport(Glibc)
import Glibc
#endif
import CFuseShim

/// The answer to `statfs` (`df`): a copy of `struct statvfs`.
public struct FileSystemStatistics: Hashable, Sendable {
    public var blockSize: UInt = 4096
    public var fragmentSize: UInt = 4096
    public var totalBlocks: UInt64 = 0
    public var freeBlocks: UInt64 = 0
    public var availableBlocks: UInt64 = 0
    public var totalFiles: UInt64 = 0
    public var freeFiles: UInt64 = 0
    public var availableFiles: UInt64 = 0
    public var maximumNameLength: UInt = 255

    public init() {}

    var statvfs: statvfs {
        var result = Glibc.statvfs()
        result.f_bsize = blockSize
        result.f_frsize = fragmentSize
        result.f_blocks = UInt(totalBlocks)
        result.f_bfree = UInt(freeBlocks)
        result.f_bavail = UInt(availableBlocks)
        result.f_files = UInt(totalFiles)
        result.f_ffree = UInt(freeFiles)
        result.f_favail = UInt(availableFiles)
        result.f_namemax = maximumNameLength
        return result
    }
}
