#if canImport(Glibc)
import Glibc
#endif
import CFuseShim
import Dispatch
import Synchronization

/// What the C callbacks find through `fuse_req_userdata`: the filesystem and the settings the
/// INIT callback applies. Retained by `FUSESession` for the C session's whole life.
final class SessionContext: Sendable {
    let operations: any FileSystemOperations
    /// `-o max_read=N` given: INIT must set the same `conn->max_read` or fail with EPROTO.
    let maxRead: UInt32?
    /// The I/O layer that negotiates `KernelFeatures`.
    let backingFiles: BackingFiles

    /// Signalled at the first request after INIT, when the kernel has applied INIT's reply
    /// (`FUSESession.setReadAhead` waits for it).
    let servingAfterInit = DispatchSemaphore(value: 0)
    private let sawRequest = Atomic<Bool>(false)

    init(operations: any FileSystemOperations, maxRead: UInt32?, backingFiles: BackingFiles) {
        self.operations = operations
        self.maxRead = maxRead
        self.backingFiles = backingFiles
    }

    func noteRequest() {
        guard !sawRequest.load(ordering: .relaxed),
              !sawRequest.exchange(true, ordering: .acquiringAndReleasing) else { return }
        servingAfterInit.signal()
    }
}

private func operations(_ req: fuse_req_t) -> (any FileSystemOperations)? {
    guard let userdata = fuse_req_userdata(req) else { return nil }
    let context = Unmanaged<SessionContext>.fromOpaque(userdata).takeUnretainedValue()
    context.noteRequest()
    return context.operations
}

/// Finds the filesystem for a request and wraps the request; replies `EIO` when impossible.
private func dispatch(_ req: fuse_req_t?, _ body: (any FileSystemOperations, Request) -> Void) {
    guard let req else { return }
    guard let fs = operations(req) else {
        fuse_reply_err(req, EIO)
        return
    }
    body(fs, Request(req))
}

/// Copies a name argument; a missing one (never sent by the kernel) answers `EINVAL`.
private func copyName<V>(_ pointer: UnsafePointer<CChar>?, _ reply: Reply<V>) -> FileName? {
    guard let pointer else {
        reply.fail(.invalidArgument)
        return nil
    }
    return FileName(cString: pointer)
}

/// Copies an xattr name; `nil` (answered with `failure`) when it is not valid UTF-8, which no
/// attribute this binding serves can be called.
private func attributeName<V>(_ pointer: UnsafePointer<CChar>?, _ reply: Reply<V>, failure: Errno) -> String? {
    guard let pointer, let string = String(validatingCString: pointer) else {
        reply.fail(failure)
        return nil
    }
    return string
}

private func file(_ pointer: UnsafeMutablePointer<fuse_file_info>?) -> FileInfo {
    FileInfo(pointer) ?? FileInfo()
}

/// The `fuse_lowlevel_ops` table: one trampoline per operation, each copying its C arguments
/// into Swift values before the filesystem sees them (pointers die when the callback returns).
enum OperationTable {
    static func make() -> fuse_lowlevel_ops {
        var ops = fuse_lowlevel_ops()
        ops.`init` = { userdata, conn in
            guard let userdata, let conn else { return }
            let context = Unmanaged<SessionContext>.fromOpaque(userdata).takeUnretainedValue()
            if let maxRead = context.maxRead { conn.pointee.max_read = maxRead }
            var info = ConnectionInfo(conn.pointee, kernelOffers: context.backingFiles.offered)
            // Splice lets `ReadData.file` replies move cache-file pages without a copy.
            info.enable([.readdirplus, .spliceWrite, .spliceMove])
            context.operations.initialize(&info)
            info.apply(to: &conn.pointee)
            // The I/O layer adds these to libfuse's INIT reply.
            context.backingFiles.want(info.kernelFeatures.intersection(info.kernelOffers))
        }
        ops.destroy = { userdata in
            guard let userdata else { return }
            Unmanaged<SessionContext>.fromOpaque(userdata).takeUnretainedValue().operations.destroy()
        }
        ops.lookup = { req, parent, cName in
            dispatch(req) { fs, request in
                let reply = Reply<Entry>(request)
                guard let name = copyName(cName, reply) else { return }
                fs.lookup(parent: parent, name: name, reply: reply)
            }
        }
        // Forgets take no answer but must be released with fuse_reply_none.
        ops.forget = { req, ino, nlookup in
            guard let req else { return }
            operations(req)?.forget(inode: ino, lookups: nlookup)
            fuse_reply_none(req)
        }
        ops.forget_multi = { req, count, forgets in
            guard let req else { return }
            if let forgets {
                let batch = (0..<count).map { Forget(inode: forgets[$0].ino, lookups: forgets[$0].nlookup) }
                operations(req)?.forget(batch)
            }
            fuse_reply_none(req)
        }
        ops.getattr = { req, ino, fi in
            dispatch(req) { fs, request in
                fs.getattr(inode: ino, file: FileInfo(fi), reply: Reply(request))
            }
        }
        ops.setattr = { req, ino, attr, toSet, fi in
            dispatch(req) { fs, request in
                let reply = Reply<FileAttributes>(request)
                guard let attr else { reply.fail(.invalidArgument); return }
                fs.setattr(inode: ino, changes: AttributeChanges(attr.pointee, mask: toSet),
                           file: FileInfo(fi), reply: reply)
            }
        }
        ops.readlink = { req, ino in
            dispatch(req) { fs, request in fs.readlink(inode: ino, reply: Reply(request)) }
        }
        ops.mknod = { req, parent, cName, mode, rdev in
            dispatch(req) { fs, request in
                let reply = Reply<Entry>(request)
                guard let name = copyName(cName, reply) else { return }
                fs.mknod(parent: parent, name: name, mode: mode, device: UInt64(rdev), reply: reply)
            }
        }
        ops.mkdir = { req, parent, cName, mode in
            dispatch(req) { fs, request in
                let reply = Reply<Entry>(request)
                guard let name = copyName(cName, reply) else { return }
                fs.mkdir(parent: parent, name: name, mode: mode, reply: reply)
            }
        }
        ops.unlink = { req, parent, cName in
            dispatch(req) { fs, request in
                let reply = Reply<Void>(request)
                guard let name = copyName(cName, reply) else { return }
                fs.unlink(parent: parent, name: name, reply: reply)
            }
        }
        ops.rmdir = { req, parent, cName in
            dispatch(req) { fs, request in
                let reply = Reply<Void>(request)
                guard let name = copyName(cName, reply) else { return }
                fs.rmdir(parent: parent, name: name, reply: reply)
            }
        }
        ops.symlink = { req, cTarget, parent, cName in
            dispatch(req) { fs, request in
                let reply = Reply<Entry>(request)
                guard let target = copyName(cTarget, reply), let name = copyName(cName, reply) else { return }
                fs.symlink(target: target.description, parent: parent, name: name, reply: reply)
            }
        }
        ops.rename = { req, parent, cName, newParent, cNewName, flags in
            dispatch(req) { fs, request in
                let reply = Reply<Void>(request)
                guard let name = copyName(cName, reply), let newName = copyName(cNewName, reply) else { return }
                fs.rename(parent: parent, name: name, newParent: newParent, newName: newName, flags: flags, reply: reply)
            }
        }
        ops.link = { req, ino, newParent, cNewName in
            dispatch(req) { fs, request in
                let reply = Reply<Entry>(request)
                guard let newName = copyName(cNewName, reply) else { return }
                fs.link(inode: ino, newParent: newParent, newName: newName, reply: reply)
            }
        }
        ops.create = { req, parent, cName, mode, fi in
            dispatch(req) { fs, request in
                let reply = Reply<CreatedFile>(request)
                guard let name = copyName(cName, reply) else { return }
                fs.create(parent: parent, name: name, mode: mode, file: file(fi), reply: reply)
            }
        }
        ops.open = { req, ino, fi in
            dispatch(req) { fs, request in fs.open(inode: ino, file: file(fi), reply: Reply(request)) }
        }
        ops.read = { req, ino, size, offset, fi in
            dispatch(req) { fs, request in
                fs.read(inode: ino, size: size, offset: Int64(offset), file: file(fi), reply: Reply(request, sizeLimit: size))
            }
        }
        ops.write = { req, ino, buffer, size, offset, fi in
            dispatch(req) { fs, request in
                let data = buffer.map { Array(UnsafeRawBufferPointer(start: $0, count: size)) } ?? []
                fs.write(inode: ino, data: data, offset: Int64(offset), file: file(fi), reply: Reply(request))
            }
        }
        ops.flush = { req, ino, fi in
            dispatch(req) { fs, request in fs.flush(inode: ino, file: file(fi), reply: Reply(request)) }
        }
        ops.release = { req, ino, fi in
            dispatch(req) { fs, request in fs.release(inode: ino, file: file(fi), reply: Reply(request)) }
        }
        ops.opendir = { req, ino, fi in
            dispatch(req) { fs, request in fs.opendir(inode: ino, file: file(fi), reply: Reply(request)) }
        }
        ops.readdir = { req, ino, size, offset, fi in
            dispatch(req) { fs, request in
                fs.readdir(inode: ino, size: size, offset: Int64(offset), file: file(fi),
                           reply: Reply(request, sizeLimit: size))
            }
        }
        ops.readdirplus = { req, ino, size, offset, fi in
            dispatch(req) { fs, request in
                fs.readdirplus(inode: ino, size: size, offset: Int64(offset), file: file(fi),
                               reply: Reply(request, sizeLimit: size))
            }
        }
        ops.releasedir = { req, ino, fi in
            dispatch(req) { fs, request in fs.releasedir(inode: ino, file: file(fi), reply: Reply(request)) }
        }
        ops.statfs = { req, ino in
            dispatch(req) { fs, request in fs.statfs(inode: ino, reply: Reply(request)) }
        }
        ops.setxattr = { req, ino, cName, value, size, flags in
            dispatch(req) { fs, request in
                let reply = Reply<Void>(request)
                guard let name = attributeName(cName, reply, failure: .notSupported) else { return }
                let bytes = value.map { Array(UnsafeRawBufferPointer(start: $0, count: size)) } ?? []
                fs.setxattr(inode: ino, name: name, value: bytes, flags: flags, reply: reply)
            }
        }
        ops.getxattr = { req, ino, cName, size in
            dispatch(req) { fs, request in
                let reply = Reply<[UInt8]>(request, sizeLimit: size)
                guard let name = attributeName(cName, reply, failure: .noData) else { return }
                fs.getxattr(inode: ino, name: name, reply: reply)
            }
        }
        ops.listxattr = { req, ino, size in
            dispatch(req) { fs, request in fs.listxattr(inode: ino, reply: Reply(request, sizeLimit: size)) }
        }
        ops.removexattr = { req, ino, cName in
            dispatch(req) { fs, request in
                let reply = Reply<Void>(request)
                guard let name = attributeName(cName, reply, failure: .noData) else { return }
                fs.removexattr(inode: ino, name: name, reply: reply)
            }
        }
        ops.access = { req, ino, mask in
            dispatch(req) { fs, request in fs.access(inode: ino, mask: mask, reply: Reply(request)) }
        }
        return ops
    }
}
