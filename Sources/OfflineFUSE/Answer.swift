/// A request's answer as a value: what a `Reply` hands to a request served without the kernel
/// (`DirectSession`), where a kernel request gets the matching `fuse_reply_*`.
public enum Answer: Sendable {
    case error(Errno)
    /// Success with nothing to carry (`fuse_reply_err(req, 0)`).
    case done
    case entry(Entry)
    case attributes(FileAttributes, timeout: Double)
    /// `open`/`opendir`; `passthrough`: reads would go to a backing file in the kernel.
    case opened(FileInfo, passthrough: Bool)
    case created(CreatedFile)
    /// Read data, an xattr's value, a list of xattr names (NUL-terminated).
    case bytes([UInt8])
    /// An xattr size query's answer, or the count `write` took.
    case size(Int)
    case directory([DirectoryEntry])
    case directoryPlus([DirectoryEntryPlus])
    case statistics(FileSystemStatistics)
    case linkTarget(String)
}
