import CFuseShim
import Foundation
import OfflineFUSE

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
        attributes.uid = info.st_uid
        attributes.gid = info.st_gid
        attributes.modificationTime = Timestamp(seconds: info.st_mtim.tv_sec, nanoseconds: info.st_mtim.tv_nsec)
        attributes.changeTime = Timestamp(seconds: info.st_ctim.tv_sec, nanoseconds: info.st_ctim.tv_nsec)
        return attributes
    }

    func inodes(_ path: String) throws(Errno) -> [String: UInt64] {
        guard let directory = opendir(full(path)) else { throw Errno(rawValue: errno) }
        defer { closedir(directory) }
        var inodes: [String: UInt64] = [:]
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { inodes[name] = UInt64(entry.pointee.d_ino) }
        }
        return inodes
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


extension KernelMount {
    func xattrLength(_ path: String, _ name: String, bufferSize: Int) throws(Errno) -> Int {
        var bytes = [UInt8](repeating: 0, count: bufferSize)
        let n = bytes.withUnsafeMutableBytes { getxattr(full(path), name, bufferSize == 0 ? nil : $0.baseAddress, bufferSize) }
        try Self.check(n)
        return n
    }

    func xattrNamesLength(_ path: String, bufferSize: Int) throws(Errno) -> Int {
        var bytes = [CChar](repeating: 0, count: bufferSize)
        let n = bytes.withUnsafeMutableBufferPointer { listxattr(full(path), bufferSize == 0 ? nil : $0.baseAddress, bufferSize) }
        try Self.check(n)
        return n
    }

    func removeXattr(_ path: String, _ name: String) throws(Errno) {
        try Self.check(Int(removexattr(full(path), name)))
    }

    struct KernelWritableItem: WritableItem {
        let fd: Int32

        func write(_ bytes: [UInt8]) throws(Errno) -> Int {
            let n = Glibc.write(fd, bytes, bytes.count)
            try KernelMount.check(n)
            return n
        }

        func close() throws(Errno) {
            try KernelMount.check(Int(Glibc.close(fd)))
        }
    }

    func openForWriting(_ path: String, append: Bool) throws(Errno) -> any WritableItem {
        let fd = Glibc.open(full(path), O_WRONLY | (append ? O_APPEND : O_TRUNC))
        try Self.check(Int(fd))
        return KernelWritableItem(fd: fd)
    }

    func statistics() throws(Errno) -> FileSystemStatistics {
        var info = statvfs()
        try Self.check(Int(statvfs(root, &info)))
        var statistics = FileSystemStatistics()
        statistics.blockSize = info.f_bsize
        statistics.totalBlocks = UInt64(info.f_blocks)
        statistics.freeBlocks = UInt64(info.f_bfree)
        statistics.availableBlocks = UInt64(info.f_bavail)
        statistics.totalFiles = UInt64(info.f_files)
        statistics.freeFiles = UInt64(info.f_ffree)
        statistics.availableFiles = UInt64(info.f_favail)
        return statistics
    }
}
