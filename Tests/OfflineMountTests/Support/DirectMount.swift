import CFuseShim
import Foundation
import Logging
import OfflineEngine
import OfflineFUSE
@testable import OfflineMount
import Synchronization


/// The library's engine and file system in this process, its operations called directly
/// (`DirectSession`): what `offlinefs mount` serves, minus the kernel.
final class DirectMount: LibraryMount {
    let engine: Engine
    let fileSystem: OfflineFileSystem
    let session: DirectSession

    /// - Parameter firstBuild: when given, the first tree build waits for it to be signalled
    ///   (requests before then see the mount as it starts).
    init(_ fixture: LibraryFixture, options: [String] = [], holding firstBuild: DispatchSemaphore? = nil) throws {
        let mountOptions = try MountOptions.parse(options)
        engine = try Engine(library: fixture.library)
        fileSystem = OfflineFileSystem(library: fixture.library.view, fetcher: engine.transfers.fetcher,
                                       actions: EngineActions(commands: engine.commands), performer: engine.commands,
                                       options: mountOptions, hls: engine.transfers.hls,
                                       downloadSpeeds: { [scheduler = engine.scheduler] in scheduler.downloadSpeeds },
                                       logger: Logger(label: "offlinefs-direct"))
        if let firstBuild {
            // `start` returns after the build: on a thread of its own.
            fileSystem.tree.beforeBuild.withLock { $0.run = { firstBuild.wait(); firstBuild.signal() } }
            let (fileSystem, interval) = (fileSystem, mountOptions.refreshInterval)
            Thread { fileSystem.start(notifier: .withoutKernel(), refreshInterval: interval) }.start()
        } else {
            fileSystem.start(notifier: .withoutKernel(), refreshInterval: mountOptions.refreshInterval)
        }
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

    func inodes(_ path: String) throws(Errno) -> [String: UInt64] {
        try withInode(path) { inode throws(Errno) in
            guard case .opened(let file, _) = try answer(session.call { self.fileSystem.opendir(inode: inode, file: FileInfo(flags: O_RDONLY), reply: $0) })
            else { throw Errno.ioError }
            defer { _ = session.call { self.fileSystem.releasedir(inode: inode, file: file, reply: $0) } }
            var inodes: [String: UInt64] = [:]
            var offset: Int64 = 0
            while true {
                guard case .directory(let entries) = try answer(session.call(sizeLimit: 1 << 16) {
                    self.fileSystem.readdir(inode: inode, size: 1 << 16, offset: offset, file: file, reply: $0)
                }) else { throw Errno.ioError }
                guard let last = entries.last else { return inodes }
                for entry in entries where !entry.name.isDotOrDotDot { inodes[entry.name.description] = entry.inode }
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

    /// The length an xattr request with a buffer of `bufferSize` bytes gives: the size query's
    /// answer, or the bytes that fit (a smaller buffer gets `ERANGE`, as from the kernel).
    private func length(_ answer: Answer) throws(Errno) -> Int {
        switch try self.answer(answer) {
        case .size(let size): return size
        case .bytes(let bytes): return bytes.count
        default: throw Errno.ioError
        }
    }

    func xattrLength(_ path: String, _ name: String, bufferSize: Int) throws(Errno) -> Int {
        try withInode(path) { inode throws(Errno) in
            try length(session.call(sizeLimit: bufferSize) { self.fileSystem.getxattr(inode: inode, name: name, reply: $0) })
        }
    }

    func xattrNamesLength(_ path: String, bufferSize: Int) throws(Errno) -> Int {
        try withInode(path) { inode throws(Errno) in
            try length(session.call(sizeLimit: bufferSize) { (reply: Reply<[String]>) in self.fileSystem.listxattr(inode: inode, reply: reply) })
        }
    }

    func statistics() throws(Errno) -> FileSystemStatistics {
        guard case .statistics(let statistics) = try answer(session.call { self.fileSystem.statfs(inode: rootInode, reply: $0) })
        else { throw Errno.ioError }
        return statistics
    }

    func removeXattr(_ path: String, _ name: String) throws(Errno) {
        try withInode(path) { inode throws(Errno) in
            _ = try answer(session.call { self.fileSystem.removexattr(inode: inode, name: name, reply: $0) })
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

    /// A file opened through `openKeepingLookup`: releasing it gives back its lookup.
    struct DirectFile: Sendable {
        let mount: DirectMount
        let inode: UInt64
        let file: FileInfo

        func release() {
            _ = mount.session.call { mount.fileSystem.release(inode: inode, file: file, reply: $0) }
            mount.fileSystem.forget(inode: inode, lookups: 1)
        }
    }

    struct DirectOpenItem: OpenItem {
        let opened: DirectFile

        func read(offset: Int64, count: Int) throws(Errno) -> [UInt8] {
            try opened.mount.read(opened.inode, opened.file, offset: offset, count: count)
        }

        func close() { opened.release() }
    }

    /// Opens `path` with `flags`; the open file keeps one lookup of its inode until it is
    /// released, as the kernel's does.
    private func openKeepingLookup(_ path: String, flags: Int32) throws(Errno) -> (inode: UInt64, file: FileInfo) {
        let (folder, name) = split(path)
        let inode = try withInode(folder) { parent throws(Errno) -> UInt64 in
            guard case .entry(let entry) = try answer(session.call { self.fileSystem.lookup(parent: parent, name: name, reply: $0) }),
                  !entry.isNegative else { throw Errno.noSuchFileOrDirectory }
            return entry.inode
        }
        let opened = session.call { self.fileSystem.open(inode: inode, file: FileInfo(flags: flags), reply: $0) }
        guard case .opened(let file, _) = opened else {
            fileSystem.forget(inode: inode, lookups: 1)
            throw done(opened) ?? Errno.ioError
        }
        return (inode, file)
    }

    func open(_ path: String) throws(Errno) -> any OpenItem {
        let (inode, file) = try openKeepingLookup(path, flags: O_RDONLY)
        return DirectOpenItem(opened: DirectFile(mount: self, inode: inode, file: file))
    }

    struct DirectWritableItem: WritableItem {
        let opened: DirectFile

        func write(_ bytes: [UInt8]) throws(Errno) -> Int {
            let (mount, inode, file) = (opened.mount, opened.inode, opened.file)
            guard case .size(let count) = try mount.answer(mount.session.call {
                mount.fileSystem.write(inode: inode, data: bytes, offset: 0, file: file, reply: $0)
            }) else { throw Errno.ioError }
            return count
        }

        /// `close(2)`: a flush, whose error close returns, then the release.
        func close() throws(Errno) {
            let (mount, inode, file) = (opened.mount, opened.inode, opened.file)
            let flushed = mount.session.call { mount.fileSystem.flush(inode: inode, file: file, reply: $0) }
            opened.release()
            _ = try mount.answer(flushed)
        }
    }

    func openForWriting(_ path: String, append: Bool) throws(Errno) -> any WritableItem {
        let (inode, file) = try openKeepingLookup(path, flags: O_WRONLY | (append ? O_APPEND : O_TRUNC))
        return DirectWritableItem(opened: DirectFile(mount: self, inode: inode, file: file))
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
