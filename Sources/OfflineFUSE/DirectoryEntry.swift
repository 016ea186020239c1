#if canImport(Glibc)
import Glibc
#endif
import CFuseShim

/// One name in a `readdir` answer.
public struct DirectoryEntry: Hashable, Sendable {
    public var name: FileName
    /// The inode number `ls -i` shows; should equal the one `stat` gives.
    public var inode: UInt64
    /// The type bits (`S_IFDIR`, `S_IFREG` …); permission bits are ignored here.
    public var mode: UInt32
    /// The cookie of the entry after this one: the kernel's next readdir starts from it.
    /// Must be non-zero and unique within the listing (e.g. the entry's index + 1).
    public var nextOffset: Int64

    public init(name: FileName, inode: UInt64, mode: UInt32, nextOffset: Int64) {
        self.name = name
        self.inode = inode
        self.mode = mode
        self.nextOffset = nextOffset
    }
}

/// One name in a `readdirplus` answer: the name with its full entry (attributes and timeouts).
public struct DirectoryEntryPlus: Hashable, Sendable {
    public var name: FileName
    public var entry: Entry
    /// As in `DirectoryEntry.nextOffset`.
    public var nextOffset: Int64

    public init(name: FileName, entry: Entry, nextOffset: Int64) {
        self.name = name
        self.entry = entry
        self.nextOffset = nextOffset
    }
}

extension Reply where Value == [DirectoryEntry] {
    /// Answers `readdir`: packs `entries` in order until the request's size is full
    /// (`fuse_add_direntry`). Give the entries that follow the request's offset; those that do
    /// not fit are asked for again by the kernel from the last packed entry's `nextOffset`.
    /// An empty sequence means end of directory. Returns the number of entries sent, or `nil`
    /// if the request was already answered.
    @discardableResult
    public func succeed(_ entries: some Sequence<DirectoryEntry>) -> Int? {
        if !request.isKernel {
            let all = Array(entries)
            return send(.directory(all)) { _ in 0 } ? all.count : nil
        }
        return pack(entries) { req, buffer, name, entry in
            var attr = stat()
            attr.st_ino = UInt(entry.inode)
            attr.st_mode = entry.mode
            return fuse_add_direntry(req, buffer.baseAddress, buffer.count, name, &attr, off_t(entry.nextOffset))
        }
    }
}

extension Reply where Value == [DirectoryEntryPlus] {
    /// Answers `readdirplus`, packing like `readdir`
    /// (`fuse_add_direntry_plus`). Every entry sent except `.` and `..` adds one to the
    /// kernel's lookup count of its inode: the return value says how many of `entries` were
    /// sent (`nil` if the request was already answered).
    @discardableResult
    public func succeed(_ entries: some Sequence<DirectoryEntryPlus>) -> Int? {
        if !request.isKernel {
            let all = Array(entries)
            return send(.directoryPlus(all)) { _ in 0 } ? all.count : nil
        }
        return pack(entries) { req, buffer, name, entry in
            var param = entry.entry.param
            return fuse_add_direntry_plus(req, buffer.baseAddress, buffer.count, name, &param, off_t(entry.nextOffset))
        }
    }
}

/// Names the packer needs from either entry kind.
protocol PackableEntry {
    var name: FileName { get }
}
extension DirectoryEntry: PackableEntry {}
extension DirectoryEntryPlus: PackableEntry {}

extension Reply {
    /// Fills one buffer of at most `sizeLimit` bytes; `add` returns the size the entry needs
    /// and writes it only when it fits (libfuse's contract).
    fileprivate func pack<S: Sequence>(
        _ entries: S,
        add: (fuse_req_t, UnsafeMutableBufferPointer<CChar>, UnsafePointer<CChar>, S.Element) -> Int
    ) -> Int? where S.Element: PackableEntry {
        var count = 0
        let sent = send(.done) { req in
            let buffer = UnsafeMutableBufferPointer<CChar>.allocate(capacity: max(sizeLimit, 1))
            defer { buffer.deallocate() }
            var used = 0
            for entry in entries {
                let remaining = UnsafeMutableBufferPointer(rebasing: buffer[used..<sizeLimit])
                let needed = (entry.name.bytes + [0]).withUnsafeBufferPointer { name in
                    name.withMemoryRebound(to: CChar.self) { add(req, remaining, $0.baseAddress!, entry) }
                }
                if needed > remaining.count { break }
                used += needed
                count += 1
            }
            return fuse_reply_buf(req, buffer.baseAddress, used)
        }
        return sent ? count : nil
    }
}
