import CSystemShim
import Foundation
import Glibc
import Synchronization

/// Why a cache file operation failed: the errno, for `ENOSPC` → `no-space`.
struct CacheFileError: Error, Sendable, CustomStringConvertible {
    var errno: Int32
    var operation: String
    var path: String

    var isNoSpace: Bool { errno == ENOSPC || errno == EDQUOT }
    /// The process (or the system) has no descriptor to spare now: nothing was written wrong.
    var isOutOfDescriptors: Bool { errno == EMFILE || errno == ENFILE }
    var description: String { "\(operation) \(path): \(String(cString: strerror(errno)))" }
}

/// One sparse cache file: bytes land with `pwrite` at their offset (holes stay unallocated)
/// and reach the disk with `fdatasync`. Its descriptors come from the engine's
/// `CacheDescriptors`, which keeps a bounded number open between uses.
///
/// The file is made (with its item's folder) by its first use, not when the engine first
/// looks at it. That use is usually the first write, which comes after the readers its bytes
/// complete were answered from memory (`CachedFile.receive`); making the file earlier, on
/// another thread while the transfer connects, slows the connect down on a busy two-core
/// machine (file system work).
///
/// Thread-safe: pwrite/pread/fdatasync on one descriptor may run on different threads.
final class CacheFile: Sendable {
    let path: String
    private let descriptors: CacheDescriptors
    let room: DiskRoom
    /// Set where `O_DIRECT` is refused (tmpfs, some FUSE or network file systems).
    private let directUnsupported = Mutex(false)  // leaf lock
    /// `O_DIRECT`, which Glibc's Swift module leaves out (it needs `_GNU_SOURCE`); its value
    /// differs between architectures.
    #if arch(x86_64) || arch(i386)
    private static let openDirectFlag: Int32? = 0o40000
    #elseif arch(arm64) || arch(arm)
    private static let openDirectFlag: Int32? = 0o200000
    #else
    private static let openDirectFlag: Int32? = nil
    #endif

    /// Bytes `write` put through the page cache since `releaseWrittenPages` last ran: the pages
    /// a download leaves there (`writeDirect` leaves none).
    private let writtenThroughPageCache = Mutex(RangeSet())

    init(path: String, descriptors: CacheDescriptors, room: DiskRoom = DiskRoom(keepFree: 0)) {
        self.path = path
        self.descriptors = descriptors
        self.room = room
    }

    deinit {
        descriptors.forget(ObjectIdentifier(self))
    }

    /// Runs `body` with the file open for reading and writing, made with its item's folder if
    /// missing.
    private func withDescriptor<Result>(_ body: (Int32) throws(CacheFileError) -> Result) throws(CacheFileError) -> Result {
        try descriptors.withDescriptor(CacheDescriptors.Key(file: ObjectIdentifier(self), direct: false),
                                       open: { () throws(CacheFileError) in try Self.openOrCreate(path) }, body)
    }

    private static func openOrCreate(_ path: String) throws(CacheFileError) -> Int32 {
        var fd = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        // The item's folder (or the cache folder) is made by its first file. Plain mkdir:
        // this is on the path of a reader's first read, and FileManager's does much more.
        // Twice at most: an eviction of another of the item's files may remove the folder
        // between the mkdir and the open.
        for _ in 0..<2 where fd < 0 && errno == ENOENT {
            try makeFolder((path as NSString).deletingLastPathComponent)
            fd = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        }
        guard fd >= 0 else { throw CacheFileError(errno: errno, operation: "open", path: path) }
        return fd
    }

    /// Makes `path` a hard link to `existing`, if that file holds `size` bytes; replaces what
    /// `path` held. False when it cannot be done (the caller fetches instead).
    static func link(_ existing: String, to path: String, size: Int64) -> Bool {
        var info = stat()
        guard stat(existing, &info) == 0, Int64(info.st_size) == size else { return false }
        let folder = (path as NSString).deletingLastPathComponent
        guard (try? makeFolder(folder)) != nil else { return false }
        // Linked under a temporary name, then renamed over: `path` is never missing or half made.
        let temporary = path + ".link"
        unlink(temporary)
        guard Glibc.link(existing, temporary) == 0 else { return false }
        guard rename(temporary, path) == 0 else {
            unlink(temporary)
            return false
        }
        return true
    }

    /// Forgets every byte: the file goes, and its item's folder with it when that is empty
    /// (an evicted item leaves no file or folder behind: at a million items touched, empty
    /// ones would hold gigabytes the cache limit does not see). Another item's cache file
    /// that links it (a side file shared by URL) keeps its bytes. This file's descriptors then
    /// open a new file at the path, made by its next use.
    func removeBytes() throws(CacheFileError) {
        guard unlink(path) == 0 || errno == ENOENT else {
            throw CacheFileError(errno: errno, operation: "unlink", path: path)
        }
        replacedAtPath()
        rmdir((path as NSString).deletingLastPathComponent)
    }

    /// Another file took its path (unlinked, or `link`ed over): the next use opens it anew.
    func replacedAtPath() {
        descriptors.reopen(ObjectIdentifier(self))
    }

    /// Makes `folder` and any missing parent.
    private static func makeFolder(_ folder: String) throws(CacheFileError) {
        if mkdir(folder, 0o755) == 0 || errno == EEXIST { return }
        guard errno == ENOENT else { throw CacheFileError(errno: errno, operation: "mkdir", path: folder) }
        let parent = (folder as NSString).deletingLastPathComponent
        guard !parent.isEmpty, parent != folder else { throw CacheFileError(errno: ENOENT, operation: "mkdir", path: folder) }
        try makeFolder(parent)
        if mkdir(folder, 0o755) == 0 || errno == EEXIST { return }
        throw CacheFileError(errno: errno, operation: "mkdir", path: folder)
    }

    /// Writes all of `bytes` at `offset`.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(CacheFileError) {
        guard let base = bytes.baseAddress else { return }
        try withDescriptor { fd throws(CacheFileError) in
            guard try writeAll(fd, base, count: bytes.count, at: offset) else {
                throw CacheFileError(errno: EINVAL, operation: "pwrite", path: path)
            }
        }
        writtenThroughPageCache.withLock { $0.insert(offset..<(offset + Int64(bytes.count))) }
    }

    /// Writes `bytes` at `offset` past the page cache (`O_DIRECT`): the caller aligns memory,
    /// offset and length (`StagingBlock.alignment`). Returns false, having written nothing,
    /// where the file system cannot (tmpfs, some FUSE or network file systems; every later
    /// call then returns false at once) or no descriptor can be had now: the caller then
    /// writes the plain way.
    func writeDirect(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(CacheFileError) -> Bool {
        guard let base = bytes.baseAddress, let direct = Self.openDirectFlag,
              !directUnsupported.withLock({ $0 }) else { return false }
        try withDescriptor { _ in }  // makes the file and its folder
        let key = CacheDescriptors.Key(file: ObjectIdentifier(self), direct: true)
        let open = { [path] () throws(CacheFileError) -> Int32 in
            let fd = Glibc.open(path, O_WRONLY | O_CLOEXEC | direct)
            guard fd >= 0 else { throw CacheFileError(errno: errno, operation: Self.directOpen, path: path) }
            return fd
        }
        let written: Bool
        do {
            written = try descriptors.withDescriptor(key, open: open) { fd throws(CacheFileError) in
                try writeAll(fd, base, count: bytes.count, at: offset)
            }
        } catch where error.operation == Self.directOpen {
            written = false
            if error.errno != EINVAL { return false }  // no descriptor now: the plain way this time
        }
        if !written { directUnsupported.withLock { $0 = true } }
        return written
    }

    private static let directOpen = "open (O_DIRECT)"

    /// `pwrite`s all of the bytes; false when the first write was refused with `EINVAL`
    /// (`O_DIRECT` where the file system cannot), having written nothing. `ENOSPC` when they
    /// would leave the disk less free than the store's room (`DiskRoom`).
    private func writeAll(_ fd: Int32, _ base: UnsafeRawPointer, count: Int, at offset: Int64) throws(CacheFileError) -> Bool {
        guard room.allows(count, fd: fd) else { throw CacheFileError(errno: ENOSPC, operation: "pwrite", path: path) }
        var done = 0
        while done < count {
            let written = pwrite(fd, base + done, count - done, off_t(offset) + off_t(done))
            if written < 0 {
                if errno == EINTR { continue }
                if errno == EINVAL && done == 0 { return false }
                throw CacheFileError(errno: errno, operation: "pwrite", path: path)
            }
            done += written
        }
        return true
    }

    /// Reads `count` bytes at `offset` (short at end of file).
    func read(at offset: Int64, count: Int) throws(CacheFileError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        let done = try withDescriptor { fd throws(CacheFileError) -> Int in
            var done = 0
            while done < count {
                let got = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, count - done, off_t(offset) + off_t(done)) }
                if got < 0 {
                    if errno == EINTR { continue }
                    throw CacheFileError(errno: errno, operation: "pread", path: path)
                }
                if got == 0 { break }
                done += got
            }
            return done
        }
        return Array(buffer[0..<done])
    }

    /// Lowercase hex SHA-256 of the first `length` bytes (an empty file's, if none was written).
    func sha256(length: Int64) throws(CacheFileError) -> String {
        try withDescriptor { fd throws(CacheFileError) in try SHA256Digest.hex(ofDescriptor: fd, length: length, path: path) }
    }

    /// Data written so far reaches the disk (metadata needed to read it back included).
    func sync() throws(CacheFileError) {
        // Any descriptor of the file will do: its written pages belong to the file, not to the
        // descriptor that wrote them.
        try withDescriptor { fd throws(CacheFileError) in
            while fdatasync(fd) != 0 {
                if errno == EINTR { continue }
                throw CacheFileError(errno: errno, operation: "fdatasync", path: path)
            }
        }
    }

    /// Asks the kernel to drop the pages `write` put in the page cache, but those of `kept`
    /// (a hint: dirty or mapped pages stay). The pages readers brought in stay.
    func releaseWrittenPages(keeping kept: [Range<Int64>]) {
        let written = writtenThroughPageCache.withLock { ranges in
            defer { ranges = RangeSet() }
            return ranges
        }
        let keep = RangeSet(kept)
        releaseCachedPages(written.ranges.flatMap { keep.gaps(in: $0) })
    }

    /// Asks the kernel to drop the clean pages of `ranges` from its page cache (a hint: dirty
    /// or mapped pages stay), from the start of the page each begins in. The
    /// kernel drops only whole pages of a range: a page split between two ranges would stay
    /// unless the later range takes it (a dirty page stays anyway; a clean one is read again
    /// from the disk if needed).
    func releaseCachedPages(_ ranges: [Range<Int64>]) {
        guard !ranges.isEmpty else { return }
        try? withDescriptor { fd in
            for range in ranges where !range.isEmpty {
                let start = range.lowerBound & ~Int64(Self.pageSize - 1)
                _ = posix_fadvise(fd, off_t(start), off_t(range.upperBound - start), POSIX_FADV_DONTNEED)
            }
        }
    }

    private static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

    /// Gives back the disk space of every byte outside `kept`: the file is cut after its last
    /// kept byte and the gaps before are punched out (a tail fetched early is kept while the
    /// bytes before it go). Where holes cannot be punched, only the cut frees space.
    func freeAll(except kept: RangeSet) throws(CacheFileError) {
        try truncate(to: kept.upperBound)
        var start: Int64 = 0
        try withDescriptor { fd throws(CacheFileError) in
            for range in kept.ranges {
                defer { start = range.upperBound }
                guard range.lowerBound > start else { continue }
                if csystem_punch_hole(fd, start, range.lowerBound - start) != 0 {
                    if errno == EOPNOTSUPP { return }
                    throw CacheFileError(errno: errno, operation: "fallocate (punch hole)", path: path)
                }
            }
        }
    }

    /// Cuts or extends the file (extension leaves a hole).
    func truncate(to size: Int64) throws(CacheFileError) {
        try withDescriptor { fd throws(CacheFileError) in
            while ftruncate(fd, off_t(size)) != 0 {
                if errno == EINTR { continue }
                throw CacheFileError(errno: errno, operation: "ftruncate", path: path)
            }
        }
    }

    /// The file's current size; 0 when there is no file yet. Needs no descriptor (it is asked
    /// when a file's state is loaded, which must work while descriptors are short).
    func size() throws(CacheFileError) -> Int64 {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT { return 0 }
            throw CacheFileError(errno: errno, operation: "stat", path: path)
        }
        return Int64(info.st_size)
    }
}
