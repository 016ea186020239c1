public import OfflineFUSE

/// What a read-only library refuses: data changes are `EACCES`, name and metadata changes
/// `EPERM` (docs/decisions.md), even for root. The one exception is the truncate that
/// `echo … > .control` sends first.
extension OfflineFileSystem {
    public func setattr(inode: UInt64, changes: AttributeChanges, file: FileInfo?, reply: Reply<FileAttributes>) {
        if case .hidden(.control)? = NodeID(inode: inode), changes.size == 0, changes.mode == nil, changes.uid == nil,
           changes.gid == nil, case .success(let attributes) = hiddenAttributes(.control) {
            // `echo … > .control` may truncate first: there is nothing to truncate.
            return reply.succeed(attributes, timeout: 0)
        }
        reply.fail(changes.size != nil ? .permissionDenied : .notPermitted)
    }

    public func removexattr(inode: UInt64, name: String, reply: Reply<Void>) {
        reply.fail(name.hasPrefix("user.") ? .notPermitted : .notSupported)
    }
    public func create(parent: UInt64, name: FileName, mode: UInt32, file: FileInfo, reply: Reply<CreatedFile>) {
        reply.fail(.permissionDenied)
    }
    public func mknod(parent: UInt64, name: FileName, mode: UInt32, device: UInt64, reply: Reply<Entry>) {
        reply.fail(.permissionDenied)
    }
    public func mkdir(parent: UInt64, name: FileName, mode: UInt32, reply: Reply<Entry>) { reply.fail(.notPermitted) }
    public func rmdir(parent: UInt64, name: FileName, reply: Reply<Void>) { reply.fail(.notPermitted) }
    public func symlink(target: String, parent: UInt64, name: FileName, reply: Reply<Entry>) { reply.fail(.notPermitted) }
    public func link(inode: UInt64, newParent: UInt64, newName: FileName, reply: Reply<Entry>) { reply.fail(.notPermitted) }
    public func rename(parent: UInt64, name: FileName, newParent: UInt64, newName: FileName, flags: UInt32,
                       reply: Reply<Void>) {
        reply.fail(.notPermitted)
    }
}
