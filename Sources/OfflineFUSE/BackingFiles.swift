#if canImport(Glibc)
import Glibc
#endif
import CFuseShim

/// Kernel features beyond libfuse 3.14's `Capabilities`, negotiated by the binding's own I/O
/// layer (`cfuse_session_io.h`) at INIT. Ask for them in `FileSystemOperations.initialize`.
public struct KernelFeatures: OptionSet, Hashable, Sendable {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// Files opened with `Reply<FileInfo>.succeed(_:passthrough:)` read and mmap their
    /// backing file in the kernel, with no request reaching the filesystem (kernel 6.9+,
    /// `CONFIG_FUSE_PASSTHROUGH`). Registering a backing file needs `CAP_SYS_ADMIN`.
    public static let passthrough = KernelFeatures(rawValue: CFUSE_INIT_PASSTHROUGH)
    /// A file opened `direct_io` may still be mmapped (through the page cache) (kernel 6.6+).
    public static let directIOMmap = KernelFeatures(rawValue: CFUSE_INIT_DIRECT_IO_ALLOW_MMAP)

    /// Every feature this binding can negotiate.
    public static let all: KernelFeatures = [.passthrough, .directIOMmap]
}

/// A file registered with the kernel as a backing file (`FUSE_DEV_IOC_BACKING_OPEN`): open
/// replies may pass reads through to it until it is unregistered.
public struct BackingFile: Hashable, Sendable {
    public let id: Int32
}

/// The session's backing files, and its I/O layer's state (what INIT negotiated).
///
/// The kernel holds its own reference to a registered file, so the descriptor given to
/// `register` may be closed at once; a file opened with a backing id keeps reading after the id
/// is unregistered. The kernel requires every open of one inode to use the same backing file,
/// and refuses (`EIO` to the opener) a passthrough open while the inode is open through the
/// page cache, or the reverse: keeping opens of an inode consistent is the filesystem's part.
public final class BackingFiles: @unchecked Sendable {
    // @unchecked: the C state is atomics and a lock of its own.
    let io: OpaquePointer

    init() throws(FUSESessionError) {
        guard let io = cfuse_io_new() else { throw .loopFailed(.noMemory) }
        self.io = io
    }

    deinit { cfuse_io_free(io) }

    /// Routes the session's I/O through the shim; after `fuse_session_mount`.
    func install(on session: OpaquePointer) -> Errno? {
        let result = cfuse_io_install(io, session)
        return result == 0 ? nil : Errno(-result)
    }

    /// What the kernel offered at INIT (empty before INIT).
    var offered: KernelFeatures { KernelFeatures(rawValue: cfuse_io_offered(io)).intersection(.all) }

    func want(_ features: KernelFeatures) { cfuse_io_want(io, features.rawValue) }

    /// The features INIT granted (empty before the INIT reply is sent).
    public var granted: KernelFeatures { KernelFeatures(rawValue: cfuse_io_granted(io)) }

    /// Whether open replies may pass reads through: the kernel agreed at INIT.
    public var isPassthroughAvailable: Bool { granted.contains(.passthrough) }

    /// Registers the open file `descriptor` as a backing file.
    /// - Returns: `EPERM` without `CAP_SYS_ADMIN`, `ELOOP` when the file's filesystem is stacked
    ///   too deep, `EOPNOTSUPP`/`EINVAL` when passthrough was not negotiated.
    public func register(descriptor: Int32) -> Result<BackingFile, Errno> {
        let id = cfuse_backing_open(io, descriptor)
        return id > 0 ? .success(BackingFile(id: id)) : .failure(Errno(id < 0 ? -id : EIO))
    }

    /// Drops a registration; files already opened with it keep reading.
    @discardableResult
    public func unregister(_ file: BackingFile) -> Errno? {
        let result = cfuse_backing_close(io, file.id)
        return result == 0 ? nil : Errno(-result)
    }
}
