import CFuseShim
import Foundation
import Logging
import OfflineEngine
import OfflineFUSE
import OfflineMount
import OfflineTestSupport

/// The two setups the mount suite runs in, as rclone's vfstest does: `direct` calls the file
/// system's operations in this process (no kernel: it runs where `/dev/fuse` is missing),
/// `kernel` goes through a real mount served by `offlinefs mount` in a child process.
enum MountSetup: String, CaseIterable, Sendable, CustomStringConvertible {
    case direct, kernel

    var description: String { rawValue }

    /// The setups this machine can run: `kernel` only where `/dev/fuse` opens and
    /// `fusermount3` is installed.
    static var available: [MountSetup] {
        FUSEAvailability.hasDevFuse && FUSEAvailability.hasFusermount ? [.direct, .kernel] : [.direct]
    }
}

/// What a test does to a mounted library, the same way in either setup. Paths are relative
/// to the mount's root; failures are the errno a program would get.
protocol LibraryMount {
    func attributes(_ path: String) throws(Errno) -> FileAttributes
    func names(_ path: String) throws(Errno) -> [String]
    func read(_ path: String, offset: Int64, count: Int) throws(Errno) -> [UInt8]
    func contents(_ path: String) throws(Errno) -> [UInt8]
    func xattr(_ path: String, _ name: String) throws(Errno) -> String
    func xattrNames(_ path: String) throws(Errno) -> [String]
    func setXattr(_ path: String, _ name: String, _ value: String) throws(Errno)
    /// Writes `text` in one write to a fresh open of `path` (the control file).
    func write(_ path: String, _ text: String) throws(Errno)
    /// `rm`.
    func remove(_ path: String) throws(Errno)
    /// Opens `path` for reading; the caller closes it.
    func open(_ path: String) throws(Errno) -> any OpenItem
    /// Tries a change a read-only library refuses; the errno it got (nil: it was done).
    func refusal(_ change: Change, _ path: String) -> Errno?
}

/// A file open for reading.
protocol OpenItem {
    func read(offset: Int64, count: Int) throws(Errno) -> [UInt8]
    func close()
}

/// Changes of names, data and metadata that programs may try on the library.
enum Change {
    case openForWriting, truncate, create(String), rename(to: String), mkdir(String), rmdir, link(to: String), symlink(String),
         chmod, chown
}

/// Mounts `fixture` in `setup`, runs `body`, always unmounts.
func withLibraryMount(_ setup: MountSetup, _ fixture: LibraryFixture, options: [String] = [],
                      _ body: (any LibraryMount) throws -> Void) throws {
    switch setup {
    case .kernel:
        try withMount(fixture, options: options) { (_: MountedLibrary) throws in
            try body(KernelMount(root: fixture.mountpoint))
        }
    case .direct:
        let mount = try DirectMount(fixture, options: options)
        defer { mount.stop() }
        try body(mount)
    }
}

// MARK: - Through the kernel

/// System calls on a real mount's files.
struct KernelMount: LibraryMount {
    let root: String

    private func full(_ path: String) -> String { path.isEmpty ? root : root + "/" + path }

    private static func check(_ result: Int) throws(Errno) {
        if result < 0 { throw Errno(rawValue: errno) }
    }

    func attributes(_ path: String) throws(Errno) -> FileAttributes {
        var info = stat()
        try Self.check(Int(stat(full(path), &info)))
        var attributes = FileAttributes(inode: UInt64(info.st_ino), mode: info.st_mode)
        attributes.size = UInt64(info.st_size)
        attributes.linkCount = UInt64(info.st_nlink)
        attributes.blocks = UInt64(info.st_blocks)
        attributes.modificationTime = Timestamp(seconds: info.st_mtim.tv_sec, nanoseconds: info.st_mtim.tv_nsec)
        attributes.changeTime = Timestamp(seconds: info.st_ctim.tv_sec, nanoseconds: info.st_ctim.tv_nsec)
        return attributes
    }

    func names(_ path: String) throws(Errno) -> [String] {
        guard let directory = opendir(full(path)) else { throw Errno(rawValue: errno) }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    func read(_ path: String, offset: Int64, count: Int) throws(Errno) -> [UInt8] {
        let fd = Glibc.open(full(path), O_RDONLY)
        try Self.check(Int(fd))
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: count)
        let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(offset)) }
        try Self.check(n)
        return Array(bytes.prefix(n))
    }

    func contents(_ path: String) throws(Errno) -> [UInt8] {
        let fd = Glibc.open(full(path), O_RDONLY)
        try Self.check(Int(fd))
        defer { close(fd) }
        var all: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 17)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            try Self.check(n)
            if n == 0 { return all }
            all += chunk.prefix(n)
        }
    }

    func xattr(_ path: String, _ name: String) throws(Errno) -> String {
        let size = getxattr(full(path), name, nil, 0)
        try Self.check(size)
        var bytes = [UInt8](repeating: 0, count: size)
        let n = bytes.withUnsafeMutableBytes { getxattr(full(path), name, $0.baseAddress, size) }
        try Self.check(n)
        return String(decoding: bytes.prefix(n), as: UTF8.self)
    }

    func xattrNames(_ path: String) throws(Errno) -> [String] {
        let size = listxattr(full(path), nil, 0)
        try Self.check(size)
        var bytes = [CChar](repeating: 0, count: size)
        let n = listxattr(full(path), &bytes, size)
        try Self.check(n)
        return bytes.prefix(n).split(separator: 0).map { String(decoding: $0.map { UInt8(bitPattern: $0) }, as: UTF8.self) }
    }

    func setXattr(_ path: String, _ name: String, _ value: String) throws(Errno) {
        let bytes = Array(value.utf8)
        try Self.check(Int(setxattr(full(path), name, bytes, bytes.count, 0)))
    }

    func write(_ path: String, _ text: String) throws(Errno) {
        let fd = Glibc.open(full(path), O_WRONLY)
        try Self.check(Int(fd))
        let bytes = Array(text.utf8)
        let n = Glibc.write(fd, bytes, bytes.count)
        let writeError = errno
        let closed = close(fd)
        if n < 0 { throw Errno(rawValue: writeError) }
        try Self.check(Int(closed))
    }
}

extension KernelMount {
    func remove(_ path: String) throws(Errno) {
        try Self.check(Int(unlink(full(path))))
    }

    struct KernelOpenItem: OpenItem {
        let fd: Int32

        func read(offset: Int64, count: Int) throws(Errno) -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: count)
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(offset)) }
            try KernelMount.check(n)
            return Array(bytes.prefix(n))
        }

        func close() { _ = Glibc.close(fd) }
    }

    func open(_ path: String) throws(Errno) -> any OpenItem {
        let fd = Glibc.open(full(path), O_RDONLY)
        try Self.check(Int(fd))
        return KernelOpenItem(fd: fd)
    }

    func refusal(_ change: Change, _ path: String) -> Errno? {
        let target = full(path), folder = (full(path) as NSString).deletingLastPathComponent
        let result: Int32
        switch change {
        case .openForWriting:
            let fd = Glibc.open(target, O_WRONLY)
            result = fd
            if fd >= 0 { Glibc.close(fd) }
        case .truncate: result = Glibc.truncate(target, 0)
        case .create(let name):
            let fd = Glibc.open(folder + "/" + name, O_WRONLY | O_CREAT, 0o644)
            result = fd
            if fd >= 0 { Glibc.close(fd) }
        case .rename(let name): result = Glibc.rename(target, folder + "/" + name)
        case .mkdir(let name): result = Glibc.mkdir(target + "/" + name, 0o755)
        case .rmdir: result = Glibc.rmdir(target)
        case .link(let name): result = Glibc.link(target, folder + "/" + name)
        case .symlink(let name): result = Glibc.symlink("x", target + "/" + name)
        case .chmod: result = Glibc.chmod(target, 0o600)
        case .chown: result = Glibc.chown(target, 1, 1)
        }
        return result < 0 ? Errno(rawValue: errno) : nil
    }
}

// MARK: - Without the kernel

/// The library's engine and file system in this process, its operations called directly
/// (`DirectSession`): what `offlinefs mount` serves, minus the kernel.
final class DirectMount: LibraryMount {
    let engine: Engine
    let fileSystem: OfflineFileSystem
    let session: DirectSession

    init(_ fixture: LibraryFixture, options: [String] = []) throws {
        let mountOptions = try MountOptions.parse(options)
        engine = try Engine(library: fixture.library)
        fileSystem = OfflineFileSystem(library: fixture.library.view, fetcher: engine.transfers.fetcher,
                                       actions: EngineActions(commands: engine.commands), performer: engine.commands,
                                       options: mountOptions, hls: engine.transfers.hls,
                                       logger: Logger(label: "offlinefs-direct"))
        fileSystem.start(notifier: .withoutKernel(), refreshInterval: mountOptions.refreshInterval)
        engine.start()
        session = DirectSession(operations: fileSystem)
    }

    func stop() {
        fileSystem.stop()
        engine.stop()
    }

    /// The inode at `path`, looked up name by name from the root as the kernel does; the
    /// lookups are given back (`forget`) once `body` is done.
    func withInode<Result>(_ path: String, _ body: (UInt64) throws(Errno) -> Result) throws(Errno) -> Result {
        var inode = rootInode
        var looked: [Forget] = []
        defer { if !looked.isEmpty { fileSystem.forget(looked) } }
        for name in path.split(separator: "/") {
            guard case .entry(let entry) = try answer(session.call { self.fileSystem.lookup(parent: inode, name: FileName(String(name)), reply: $0) }),
                  !entry.isNegative else { throw Errno.noSuchFileOrDirectory }
            inode = entry.inode
            looked.append(Forget(inode: inode, lookups: 1))
        }
        return try body(inode)
    }

    /// `answer`, or the errno it carries.
    func answer(_ answer: Answer) throws(Errno) -> Answer {
        if case .error(let errno) = answer { throw errno }
        return answer
    }

    func attributes(_ path: String) throws(Errno) -> FileAttributes {
        try withInode(path) { inode throws(Errno) in
            guard case .attributes(let attributes, _) = try answer(session.call { self.fileSystem.getattr(inode: inode, file: nil, reply: $0) })
            else { throw Errno.ioError }
            return attributes
        }
    }

    func names(_ path: String) throws(Errno) -> [String] {
        try withInode(path) { inode throws(Errno) in
            guard case .opened(let file, _) = try answer(session.call { self.fileSystem.opendir(inode: inode, file: FileInfo(flags: O_RDONLY), reply: $0) })
            else { throw Errno.ioError }
            defer { _ = session.call { self.fileSystem.releasedir(inode: inode, file: file, reply: $0) } }
            var names: [String] = []
            var offset: Int64 = 0
            while true {
                guard case .directory(let entries) = try answer(session.call(sizeLimit: 1 << 16) {
                    self.fileSystem.readdir(inode: inode, size: 1 << 16, offset: offset, file: file, reply: $0)
                }) else { throw Errno.ioError }
                guard let last = entries.last else { return names.sorted() }
                names += entries.filter { !$0.name.isDotOrDotDot }.map(\.name.description)
                offset = last.nextOffset
            }
        }
    }

    /// Opens `path` with `flags`, runs `body` with the open file, releases it.
    private func withOpenFile<Result>(_ path: String, flags: Int32,
                                      _ body: (UInt64, FileInfo) throws(Errno) -> Result) throws(Errno) -> Result {
        try withInode(path) { inode throws(Errno) in
            guard case .opened(let file, _) = try answer(session.call { self.fileSystem.open(inode: inode, file: FileInfo(flags: flags), reply: $0) })
            else { throw Errno.ioError }
            defer { _ = session.call { self.fileSystem.release(inode: inode, file: file, reply: $0) } }
            return try body(inode, file)
        }
    }

    func read(_ inode: UInt64, _ file: FileInfo, offset: Int64, count: Int) throws(Errno) -> [UInt8] {
        guard case .bytes(let bytes) = try answer(session.call(sizeLimit: count) {
            self.fileSystem.read(inode: inode, size: count, offset: offset, file: file, reply: $0)
        }) else { throw Errno.ioError }
        return bytes
    }

    func read(_ path: String, offset: Int64, count: Int) throws(Errno) -> [UInt8] {
        try withOpenFile(path, flags: O_RDONLY) { inode, file throws(Errno) in try read(inode, file, offset: offset, count: count) }
    }

    func contents(_ path: String) throws(Errno) -> [UInt8] {
        try withOpenFile(path, flags: O_RDONLY) { inode, file throws(Errno) in
            var all: [UInt8] = []
            while true {
                let chunk = try read(inode, file, offset: Int64(all.count), count: 1 << 17)
                if chunk.isEmpty { return all }
                all += chunk
            }
        }
    }

    /// The xattr size protocol, as `getxattr(2)` and `listxattr(2)` use it: the size, then the bytes.
    private func sized(_ operation: @escaping (UInt64, Reply<[UInt8]>) -> Void, _ inode: UInt64) throws(Errno) -> [UInt8] {
        guard case .size(let size) = try answer(session.call(sizeLimit: 0) { operation(inode, $0) }) else { throw Errno.ioError }
        if size == 0 { return [] }
        guard case .bytes(let bytes) = try answer(session.call(sizeLimit: size) { operation(inode, $0) }) else { throw Errno.ioError }
        return bytes
    }

    func xattr(_ path: String, _ name: String) throws(Errno) -> String {
        try withInode(path) { inode throws(Errno) in
            String(decoding: try sized({ self.fileSystem.getxattr(inode: $0, name: name, reply: $1) }, inode), as: UTF8.self)
        }
    }

    func xattrNames(_ path: String) throws(Errno) -> [String] {
        try withInode(path) { inode throws(Errno) in
            guard case .size(let size) = try answer(session.call(sizeLimit: 0) { (reply: Reply<[String]>) in
                self.fileSystem.listxattr(inode: inode, reply: reply)
            }) else { throw Errno.ioError }
            if size == 0 { return [] }
            guard case .bytes(let bytes) = try answer(session.call(sizeLimit: size) { (reply: Reply<[String]>) in
                self.fileSystem.listxattr(inode: inode, reply: reply)
            }) else { throw Errno.ioError }
            return bytes.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        }
    }

    func setXattr(_ path: String, _ name: String, _ value: String) throws(Errno) {
        try withInode(path) { inode throws(Errno) in
            _ = try answer(session.call { self.fileSystem.setxattr(inode: inode, name: name, value: Array(value.utf8), flags: 0, reply: $0) })
        }
    }

    func write(_ path: String, _ text: String) throws(Errno) {
        try withOpenFile(path, flags: O_WRONLY) { inode, file throws(Errno) in
            _ = try answer(session.call { self.fileSystem.write(inode: inode, data: Array(text.utf8), offset: 0, file: file, reply: $0) })
            _ = try answer(session.call { self.fileSystem.flush(inode: inode, file: file, reply: $0) })
        }
    }
}

extension DirectMount {
    /// The folder of `path` and its last name.
    private func split(_ path: String) -> (folder: String, name: FileName) {
        let parts = path.split(separator: "/").map(String.init)
        return (parts.dropLast().joined(separator: "/"), FileName(parts.last ?? ""))
    }

    private func done(_ answer: Answer) -> Errno? {
        if case .error(let errno) = answer { return errno }
        return nil
    }

    func remove(_ path: String) throws(Errno) {
        let (folder, name) = split(path)
        try withInode(folder) { parent throws(Errno) in
            if let errno = done(session.call { self.fileSystem.unlink(parent: parent, name: name, reply: $0) }) { throw errno }
        }
    }

    final class DirectOpenItem: OpenItem {
        let mount: DirectMount
        let inode: UInt64
        let file: FileInfo

        init(mount: DirectMount, inode: UInt64, file: FileInfo) {
            self.mount = mount
            self.inode = inode
            self.file = file
        }

        func read(offset: Int64, count: Int) throws(Errno) -> [UInt8] {
            try mount.read(inode, file, offset: offset, count: count)
        }

        func close() {
            _ = mount.session.call { self.mount.fileSystem.release(inode: self.inode, file: self.file, reply: $0) }
            mount.fileSystem.forget(inode: inode, lookups: 1)
        }
    }

    func open(_ path: String) throws(Errno) -> any OpenItem {
        // The open file keeps one lookup of its inode until it is closed, as the kernel's does.
        let (folder, name) = split(path)
        let inode = try withInode(folder) { parent throws(Errno) -> UInt64 in
            guard case .entry(let entry) = try answer(session.call { self.fileSystem.lookup(parent: parent, name: name, reply: $0) }),
                  !entry.isNegative else { throw Errno.noSuchFileOrDirectory }
            return entry.inode
        }
        let opened = session.call { self.fileSystem.open(inode: inode, file: FileInfo(flags: O_RDONLY), reply: $0) }
        guard case .opened(let file, _) = opened else {
            fileSystem.forget(inode: inode, lookups: 1)
            throw done(opened) ?? Errno.ioError
        }
        return DirectOpenItem(mount: self, inode: inode, file: file)
    }

    func refusal(_ change: Change, _ path: String) -> Errno? {
        let (folder, name) = split(path)
        do {
            return try withInode(folder) { parent throws(Errno) -> Errno? in
                try withInode(path) { inode throws(Errno) -> Errno? in
                    switch change {
                    case .openForWriting:
                        let answer = session.call { self.fileSystem.open(inode: inode, file: FileInfo(flags: O_WRONLY), reply: $0) }
                        if case .opened(let file, _) = answer {
                            _ = session.call { self.fileSystem.release(inode: inode, file: file, reply: $0) }
                        }
                        return done(answer)
                    case .truncate:
                        return done(session.call { self.fileSystem.setattr(inode: inode, changes: AttributeChanges(size: 0), file: nil, reply: $0) })
                    case .create(let new):
                        return done(session.call { self.fileSystem.create(parent: parent, name: FileName(new), mode: 0o100644,
                                                                          file: FileInfo(flags: O_WRONLY | O_CREAT), reply: $0) })
                    case .rename(let new):
                        return done(session.call { self.fileSystem.rename(parent: parent, name: name, newParent: parent,
                                                                          newName: FileName(new), flags: 0, reply: $0) })
                    case .mkdir(let new):
                        return done(session.call { self.fileSystem.mkdir(parent: inode, name: FileName(new), mode: 0o755, reply: $0) })
                    case .rmdir:
                        return done(session.call { self.fileSystem.rmdir(parent: parent, name: name, reply: $0) })
                    case .link(let new):
                        return done(session.call { self.fileSystem.link(inode: inode, newParent: parent, newName: FileName(new), reply: $0) })
                    case .symlink(let new):
                        return done(session.call { self.fileSystem.symlink(target: "x", parent: inode, name: FileName(new), reply: $0) })
                    case .chmod:
                        return done(session.call { self.fileSystem.setattr(inode: inode, changes: AttributeChanges(mode: 0o600), file: nil, reply: $0) })
                    case .chown:
                        return done(session.call { self.fileSystem.setattr(inode: inode, changes: AttributeChanges(uid: 1, gid: 1), file: nil, reply: $0) })
                    }
                }
            }
        } catch {
            return error
        }
    }
}
