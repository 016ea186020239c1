#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import OfflineFUSE
import Synchronization

/// A small read-only in-memory tree that exercises every reply kind of the binding:
///
/// ```
/// /hello.txt     text, xattr user.example = "value-42"
/// /docs/readme.md
/// /many/         1000 entries with long names (several readdir calls)
/// /spliced.bin   a real file's bytes, answered by splicing from its descriptor
/// /delayed.txt   answered 50 ms later from another thread
/// /slow.txt      a read that waits until interrupted (answered EINTR), bounded at 10 s
/// /passthrough.bin  the same bytes as spliced.bin, opened with reads passed through to that
///                   file in the kernel when INIT granted it (else spliced like spliced.bin)
/// ```
///
/// Counters the tests read back as xattrs: `user.slow-reads` and `user.interrupts` on
/// `slow.txt`, `user.readdir-calls` on `many/`, `user.reads` and `user.passthrough-opens` on
/// `passthrough.bin`, and on the root `user.kernel-features` (the `KernelFeatures` INIT
/// granted, a number). Every change is refused: open for writing and
/// setattr with `EACCES`, namespace changes and setxattr with `EPERM`.
final class ExampleFileSystem: FileSystemOperations {
    private enum Content {
        case directory([UInt64])
        case bytes([UInt8])
        case spliced(descriptor: Int32, size: UInt64)
        case delayed([UInt8])
        case slow
        case passthrough(path: String, descriptor: Int32, size: UInt64)
    }

    private struct Node {
        var name: FileName
        var parent: UInt64
        var attributes: FileAttributes
        var content: Content
        var xattrs: [String: [UInt8]] = [:]
    }

    private struct Counters {
        var slowReads = 0
        var interrupts = 0
        var readdirCalls = 0
        var passthroughReads = 0
        var passthroughOpens = 0
        /// One registration shared by every open of passthrough.bin (the kernel's rule).
        var backing: BackingFile?
    }

    static let hello = 2 as UInt64, docs = 3 as UInt64, many = 4 as UInt64
    static let spliced = 5 as UInt64, delayed = 6 as UInt64, slow = 7 as UInt64, readme = 8 as UInt64
    static let passthrough = 9 as UInt64
    static let manyCount = 1000

    private let nodes: [UInt64: Node]  // immutable after init: no lock needed
    private let counters = Mutex(Counters())  // protected: the request counters
    private let timeout = 1.0
    /// The session's backing files, set once the session exists.
    let backingFiles = Mutex<BackingFiles?>(nil)

    init(spliceSource: Int32, spliceSourcePath: String) {
        var nodes: [UInt64: Node] = [:]
        let uid = getuid(), gid = getgid()
        func add(_ inode: UInt64, _ name: String, parent: UInt64, _ content: Content) {
            var attributes: FileAttributes
            switch content {
            case .directory:
                attributes = .directory(inode: inode)
            case .bytes(let bytes), .delayed(let bytes):
                attributes = .file(inode: inode, size: UInt64(bytes.count))
            case .spliced(_, let size), .passthrough(_, _, let size):
                attributes = .file(inode: inode, size: size)
            case .slow:
                attributes = .file(inode: inode, size: 100)
            }
            attributes.uid = uid
            attributes.gid = gid
            attributes.setTimes(Timestamp(seconds: 1_700_000_000))
            nodes[inode] = Node(name: FileName(name), parent: parent, attributes: attributes, content: content)
        }
        let manyChildren = (0..<Self.manyCount).map { 1000 + UInt64($0) }
        add(rootInode, "", parent: rootInode,
            .directory([Self.hello, Self.docs, Self.many, Self.spliced, Self.delayed, Self.slow, Self.passthrough]))
        add(Self.hello, "hello.txt", parent: rootInode, .bytes(Array("Hello, world!\n".utf8)))
        add(Self.docs, "docs", parent: rootInode, .directory([Self.readme]))
        add(Self.readme, "readme.md", parent: Self.docs, .bytes(Array("# Read me\n".utf8)))
        add(Self.many, "many", parent: rootInode, .directory(manyChildren))
        for (index, inode) in manyChildren.enumerated() {
            add(inode, Self.manyName(index), parent: Self.many, .bytes(Array("\(index)\n".utf8)))
        }
        let spliceSize = UInt64(max(0, lseek(spliceSource, 0, SEEK_END)))
        add(Self.spliced, "spliced.bin", parent: rootInode, .spliced(descriptor: spliceSource, size: spliceSize))
        add(Self.passthrough, "passthrough.bin", parent: rootInode,
            .passthrough(path: spliceSourcePath, descriptor: spliceSource, size: spliceSize))
        add(Self.delayed, "delayed.txt", parent: rootInode, .delayed(Array("arrived later\n".utf8)))
        add(Self.slow, "slow.txt", parent: rootInode, .slow)
        nodes[Self.hello]!.xattrs["user.example"] = Array("value-42".utf8)
        self.nodes = nodes
    }

    /// A long name (about 200 bytes) so 1000 of them need many readdir buffers.
    static func manyName(_ index: Int) -> String {
        let stem = "entry-\(index)-"
        return stem + String(repeating: "x", count: 200 - stem.utf8.count)
    }

    private func entry(_ inode: UInt64) -> Entry {
        Entry(attributes: nodes[inode]!.attributes, attributeTimeout: timeout, entryTimeout: timeout)
    }

    private func children(of inode: UInt64) -> [(FileName, UInt64)]? {
        guard let node = nodes[inode], case .directory(let children) = node.content else { return nil }
        return [(".", inode), ("..", node.parent)] + children.map { (nodes[$0]!.name, $0) }
    }

    func lookup(parent: UInt64, name: FileName, reply: Reply<Entry>) {
        guard let children = children(of: parent) else { return reply.fail(.notDirectory) }
        guard let match = children.dropFirst(2).first(where: { $0.0 == name }) else {
            return reply.succeed(.negative(timeout: timeout))
        }
        reply.succeed(entry(match.1))
    }

    func getattr(inode: UInt64, file: FileInfo?, reply: Reply<FileAttributes>) {
        guard let node = nodes[inode] else { return reply.fail(.noSuchFileOrDirectory) }
        reply.succeed(node.attributes, timeout: timeout)
    }

    func setattr(inode: UInt64, changes: AttributeChanges, file: FileInfo?, reply: Reply<FileAttributes>) {
        reply.fail(.permissionDenied)
    }

    func opendir(inode: UInt64, file: FileInfo, reply: Reply<FileInfo>) {
        guard children(of: inode) != nil else { return reply.fail(.notDirectory) }
        if inode == Self.many { counters.withLock { $0.readdirCalls = 0 } }
        reply.succeed(file)
    }

    func readdir(inode: UInt64, size: Int, offset: Int64, file: FileInfo, reply: Reply<[DirectoryEntry]>) {
        guard let children = children(of: inode) else { return reply.fail(.notDirectory) }
        if inode == Self.many { counters.withLock { $0.readdirCalls += 1 } }
        let page = children.enumerated().dropFirst(Int(offset)).lazy.map { index, child in
            DirectoryEntry(name: child.0, inode: child.1, mode: self.nodes[child.1]!.attributes.mode,
                           nextOffset: Int64(index + 1))
        }
        reply.succeed(page)
    }

    func readdirplus(inode: UInt64, size: Int, offset: Int64, file: FileInfo, reply: Reply<[DirectoryEntryPlus]>) {
        guard let children = children(of: inode) else { return reply.fail(.notDirectory) }
        if inode == Self.many { counters.withLock { $0.readdirCalls += 1 } }
        let page = children.enumerated().dropFirst(Int(offset)).lazy.map { index, child in
            DirectoryEntryPlus(name: child.0, entry: self.entry(child.1), nextOffset: Int64(index + 1))
        }
        // Inodes here live as long as the process: the lookup count needs no bookkeeping.
        reply.succeed(page)
    }

    func initialize(_ connection: inout ConnectionInfo) {
        connection.kernelFeatures = .all
    }

    func open(inode: UInt64, file: FileInfo, reply: Reply<FileInfo>) {
        guard let node = nodes[inode] else { return reply.fail(.noSuchFileOrDirectory) }
        if file.isWritable { return reply.fail(.permissionDenied) }
        var opened = file
        switch node.content {
        case .directory: return reply.fail(.isDirectory)
        case .delayed, .slow: opened.directIO = true  // every read reaches us, none cached
        case .bytes, .spliced: opened.keepCache = true
        case .passthrough(let path, _, _):
            if let backing = passthroughBacking(path) { return reply.succeed(opened, passthrough: backing) }
        }
        reply.succeed(opened)
    }

    /// The backing registration of passthrough.bin, made at its first open; nil when
    /// passthrough is not available.
    private func passthroughBacking(_ path: String) -> BackingFile? {
        guard let files = backingFiles.withLock({ $0 }), files.isPassthroughAvailable else { return nil }
        return counters.withLock { counters -> BackingFile? in
            if counters.backing == nil {
                let fd = Glibc.open(path, O_RDONLY)
                guard fd >= 0 else { return nil }
                defer { close(fd) }
                counters.backing = try? files.register(descriptor: fd).get()
            }
            if counters.backing != nil { counters.passthroughOpens += 1 }
            return counters.backing
        }
    }

    func read(inode: UInt64, size: Int, offset: Int64, file: FileInfo, reply: Reply<ReadData>) {
        guard let node = nodes[inode] else { return reply.fail(.noSuchFileOrDirectory) }
        switch node.content {
        case .directory:
            reply.fail(.isDirectory)
        case .bytes(let bytes):
            reply.succeed(bytes: Self.slice(bytes, size: size, offset: offset))
        case .spliced(let descriptor, let fileSize), .passthrough(_, let descriptor, let fileSize):
            if inode == Self.passthrough { counters.withLock { $0.passthroughReads += 1 } }
            let count = max(0, min(Int64(size), Int64(fileSize) - offset))
            reply.succeed(descriptor: descriptor, offset: offset, count: Int(count))
        case .delayed(let bytes):
            // Answered from another thread, as a read waiting on a download would be.
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) {
                reply.succeed(bytes: Self.slice(bytes, size: size, offset: offset))
            }
        case .slow:
            counters.withLock { $0.slowReads += 1 }
            reply.request.onInterrupt { [self] in
                self.counters.withLock { $0.interrupts += 1 }
                reply.fail(.interrupted)
            }
            // The bound every request has: never wait forever.
            DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(10)) { reply.fail(.ioError) }
        }
    }

    private static func slice(_ bytes: [UInt8], size: Int, offset: Int64) -> [UInt8] {
        guard offset < bytes.count else { return [] }
        return Array(bytes[Int(offset)..<min(bytes.count, Int(offset) + size)])
    }

    func write(inode: UInt64, data: [UInt8], offset: Int64, file: FileInfo, reply: Reply<Int>) {
        reply.fail(.permissionDenied)
    }

    func getxattr(inode: UInt64, name: String, reply: Reply<[UInt8]>) {
        guard let node = nodes[inode] else { return reply.fail(.noSuchFileOrDirectory) }
        if let value = node.xattrs[name] { return reply.succeed(value) }
        let counter: Int? = counters.withLock { counters in
            switch (inode, name) {
            case (Self.slow, "user.slow-reads"): counters.slowReads
            case (Self.slow, "user.interrupts"): counters.interrupts
            case (Self.many, "user.readdir-calls"): counters.readdirCalls
            case (Self.passthrough, "user.reads"): counters.passthroughReads
            case (Self.passthrough, "user.passthrough-opens"): counters.passthroughOpens
            default: nil
            }
        }
        if inode == rootInode && name == "user.kernel-features" {
            return reply.succeed(String(backingFiles.withLock { $0 }?.granted.rawValue ?? 0))
        }
        guard let counter else { return reply.fail(.noData) }
        reply.succeed(String(counter))
    }

    func listxattr(inode: UInt64, reply: Reply<[String]>) {
        guard let node = nodes[inode] else { return reply.fail(.noSuchFileOrDirectory) }
        reply.succeed(node.xattrs.keys.sorted())
    }

    func setxattr(inode: UInt64, name: String, value: [UInt8], flags: Int32, reply: Reply<Void>) {
        reply.fail(.notPermitted)
    }

    func removexattr(inode: UInt64, name: String, reply: Reply<Void>) { reply.fail(.notPermitted) }
    func mkdir(parent: UInt64, name: FileName, mode: UInt32, reply: Reply<Entry>) { reply.fail(.notPermitted) }
    func mknod(parent: UInt64, name: FileName, mode: UInt32, device: UInt64, reply: Reply<Entry>) {
        reply.fail(.notPermitted)
    }
    func create(parent: UInt64, name: FileName, mode: UInt32, file: FileInfo, reply: Reply<CreatedFile>) {
        reply.fail(.notPermitted)
    }
    func unlink(parent: UInt64, name: FileName, reply: Reply<Void>) { reply.fail(.notPermitted) }
    func rmdir(parent: UInt64, name: FileName, reply: Reply<Void>) { reply.fail(.notPermitted) }
    func rename(parent: UInt64, name: FileName, newParent: UInt64, newName: FileName, flags: UInt32,
                reply: Reply<Void>) {
        reply.fail(.notPermitted)
    }
    func link(inode: UInt64, newParent: UInt64, newName: FileName, reply: Reply<Entry>) { reply.fail(.notPermitted) }
    func symlink(target: String, parent: UInt64, name: FileName, reply: Reply<Entry>) { reply.fail(.notPermitted) }
}
