/// The inode number of the mount's root directory (`FUSE_ROOT_ID`).
public let rootInode: UInt64 = 1

/// One `forget` of a batch: the kernel drops `lookups` references to `inode`.
public struct Forget: Hashable, Sendable {
    public var inode: UInt64
    public var lookups: UInt64

    public init(inode: UInt64, lookups: UInt64) {
        self.inode = inode
        self.lookups = lookups
    }
}

/// A filesystem served through `FUSESession`: one method per low-level FUSE operation.
///
/// Methods run on libfuse's worker threads, several at once; they should answer quickly
/// (from memory or a local file) or hand the reply to the work that will answer it, and never
/// block on the network. Every argument is a Swift copy, valid after the method returns.
/// Each method that answers receives a `Reply`: exactly one answer is sent whatever the
/// method does, and a reply dropped unanswered sends `EIO`.
///
/// Defaults: `ENOSYS` for operations a read-only tree can leave out (the kernel then stops
/// asking for `access`, `flush` …); success for `open`, `opendir`, `release`, `releasedir`,
/// `flush` and `statfs`, as libfuse does when they are missing; and for extended attributes
/// never `ENOSYS` (it disables xattrs for the whole mount): `getxattr` and `removexattr` answer
/// `ENODATA`, `listxattr` an empty list, `setxattr` `ENOTSUP`.
///
/// `readdirplus` is enabled at INIT (the kernel uses it for `ls -l`); a filesystem that does
/// not implement it must `disable(.readdirplus)` in `initialize`.
public protocol FileSystemOperations: AnyObject, Sendable {
    /// INIT: negotiate the connection. Runs once before any other request.
    func initialize(_ connection: inout ConnectionInfo)
    /// The session is ending (unmount or exit); no request follows.
    func destroy()

    /// Looks `name` up in `parent`. A cached miss is `reply.succeed(.negative(timeout:))`.
    func lookup(parent: UInt64, name: FileName, reply: Reply<Entry>)
    /// The kernel drops `lookups` references to `inode` (from entry replies and readdirplus).
    func forget(inode: UInt64, lookups: UInt64)
    /// A batch of forgets (FORGET_MULTI); the default calls `forget(inode:lookups:)` for each.
    func forget(_ batch: [Forget])

    func getattr(inode: UInt64, file: FileInfo?, reply: Reply<FileAttributes>)
    /// `chmod`, `chown`, `truncate`, `utimens`; answers with the attributes after the change.
    func setattr(inode: UInt64, changes: AttributeChanges, file: FileInfo?, reply: Reply<FileAttributes>)
    func readlink(inode: UInt64, reply: Reply<String>)

    func mknod(parent: UInt64, name: FileName, mode: UInt32, device: UInt64, reply: Reply<Entry>)
    func mkdir(parent: UInt64, name: FileName, mode: UInt32, reply: Reply<Entry>)
    func unlink(parent: UInt64, name: FileName, reply: Reply<Void>)
    func rmdir(parent: UInt64, name: FileName, reply: Reply<Void>)
    func symlink(target: String, parent: UInt64, name: FileName, reply: Reply<Entry>)
    /// `flags` are `renameat2`'s (`RENAME_NOREPLACE`, `RENAME_EXCHANGE`).
    func rename(parent: UInt64, name: FileName, newParent: UInt64, newName: FileName, flags: UInt32, reply: Reply<Void>)
    func link(inode: UInt64, newParent: UInt64, newName: FileName, reply: Reply<Entry>)
    /// Creates and opens a regular file (`open` with `O_CREAT`).
    func create(parent: UInt64, name: FileName, mode: UInt32, file: FileInfo, reply: Reply<CreatedFile>)

    /// Opens a file: answer with `file` changed as needed (`handle`, `directIO`, `keepCache`).
    func open(inode: UInt64, file: FileInfo, reply: Reply<FileInfo>)
    /// Reads `size` bytes at `offset`. May be answered later from another thread; register
    /// `reply.request.onInterrupt` first when the wait can be long.
    func read(inode: UInt64, size: Int, offset: Int64, file: FileInfo, reply: Reply<ReadData>)
    func write(inode: UInt64, data: [UInt8], offset: Int64, file: FileInfo, reply: Reply<Int>)
    /// Each `close` of a file descriptor (there may be several per open).
    func flush(inode: UInt64, file: FileInfo, reply: Reply<Void>)
    /// The last close of an open file; the answer's error is ignored by the kernel.
    func release(inode: UInt64, file: FileInfo, reply: Reply<Void>)

    func opendir(inode: UInt64, file: FileInfo, reply: Reply<FileInfo>)
    /// Lists the directory from the cookie `offset` (0: the start); `reply.succeed(entries)`
    /// packs what fits in `size` bytes.
    func readdir(inode: UInt64, size: Int, offset: Int64, file: FileInfo, reply: Reply<[DirectoryEntry]>)
    /// `readdir` with each entry's attributes; entries sent (except `.`, `..`) count as lookups.
    func readdirplus(inode: UInt64, size: Int, offset: Int64, file: FileInfo, reply: Reply<[DirectoryEntryPlus]>)
    func releasedir(inode: UInt64, file: FileInfo, reply: Reply<Void>)

    func statfs(inode: UInt64, reply: Reply<FileSystemStatistics>)
    /// `flags` are `setxattr(2)`'s (`XATTR_CREATE`, `XATTR_REPLACE`).
    func setxattr(inode: UInt64, name: String, value: [UInt8], flags: Int32, reply: Reply<Void>)
    /// Answer with the whole value: the binding handles size queries and `ERANGE`.
    func getxattr(inode: UInt64, name: String, reply: Reply<[UInt8]>)
    /// Answer with every name: the binding handles size queries and `ERANGE`.
    func listxattr(inode: UInt64, reply: Reply<[String]>)
    func removexattr(inode: UInt64, name: String, reply: Reply<Void>)
    /// `access(2)`; not sent with `default_permissions`.
    func access(inode: UInt64, mask: Int32, reply: Reply<Void>)
}

extension FileSystemOperations {
    public func initialize(_ connection: inout ConnectionInfo) {}
    public func destroy() {}

    public func lookup(parent: UInt64, name: FileName, reply: Reply<Entry>) { reply.fail(.noFunction) }
    public func forget(inode: UInt64, lookups: UInt64) {}
    public func forget(_ batch: [Forget]) {
        for item in batch { forget(inode: item.inode, lookups: item.lookups) }
    }

    public func getattr(inode: UInt64, file: FileInfo?, reply: Reply<FileAttributes>) { reply.fail(.noFunction) }
    public func setattr(inode: UInt64, changes: AttributeChanges, file: FileInfo?, reply: Reply<FileAttributes>) {
        reply.fail(.noFunction)
    }
    public func readlink(inode: UInt64, reply: Reply<String>) { reply.fail(.noFunction) }

    public func mknod(parent: UInt64, name: FileName, mode: UInt32, device: UInt64, reply: Reply<Entry>) {
        reply.fail(.noFunction)
    }
    public func mkdir(parent: UInt64, name: FileName, mode: UInt32, reply: Reply<Entry>) { reply.fail(.noFunction) }
    public func unlink(parent: UInt64, name: FileName, reply: Reply<Void>) { reply.fail(.noFunction) }
    public func rmdir(parent: UInt64, name: FileName, reply: Reply<Void>) { reply.fail(.noFunction) }
    public func symlink(target: String, parent: UInt64, name: FileName, reply: Reply<Entry>) { reply.fail(.noFunction) }
    public func rename(parent: UInt64, name: FileName, newParent: UInt64, newName: FileName, flags: UInt32,
                       reply: Reply<Void>) {
        reply.fail(.noFunction)
    }
    public func link(inode: UInt64, newParent: UInt64, newName: FileName, reply: Reply<Entry>) { reply.fail(.noFunction) }
    public func create(parent: UInt64, name: FileName, mode: UInt32, file: FileInfo, reply: Reply<CreatedFile>) {
        reply.fail(.noFunction)
    }

    public func open(inode: UInt64, file: FileInfo, reply: Reply<FileInfo>) { reply.succeed(file) }
    public func read(inode: UInt64, size: Int, offset: Int64, file: FileInfo, reply: Reply<ReadData>) {
        reply.fail(.noFunction)
    }
    public func write(inode: UInt64, data: [UInt8], offset: Int64, file: FileInfo, reply: Reply<Int>) {
        reply.fail(.noFunction)
    }
    public func flush(inode: UInt64, file: FileInfo, reply: Reply<Void>) { reply.succeed() }
    public func release(inode: UInt64, file: FileInfo, reply: Reply<Void>) { reply.succeed() }

    public func opendir(inode: UInt64, file: FileInfo, reply: Reply<FileInfo>) { reply.succeed(file) }
    public func readdir(inode: UInt64, size: Int, offset: Int64, file: FileInfo, reply: Reply<[DirectoryEntry]>) {
        reply.fail(.noFunction)
    }
    public func readdirplus(inode: UInt64, size: Int, offset: Int64, file: FileInfo,
                            reply: Reply<[DirectoryEntryPlus]>) {
        reply.fail(.noFunction)
    }
    public func releasedir(inode: UInt64, file: FileInfo, reply: Reply<Void>) { reply.succeed() }

    public func statfs(inode: UInt64, reply: Reply<FileSystemStatistics>) { reply.succeed(FileSystemStatistics()) }
    public func setxattr(inode: UInt64, name: String, value: [UInt8], flags: Int32, reply: Reply<Void>) {
        reply.fail(.notSupported)
    }
    public func getxattr(inode: UInt64, name: String, reply: Reply<[UInt8]>) { reply.fail(.noData) }
    public func listxattr(inode: UInt64, reply: Reply<[String]>) { reply.succeed([String]()) }
    public func removexattr(inode: UInt64, name: String, reply: Reply<Void>) { reply.fail(.noData) }
    public func access(inode: UInt64, mask: Int32, reply: Reply<Void>) { reply.fail(.noFunction) }
}
