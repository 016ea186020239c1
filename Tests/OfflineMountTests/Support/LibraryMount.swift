import Foundation
import OfflineFUSE
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
/// Both setups may be called from several threads at once, as libfuse calls the file system.
protocol LibraryMount: Sendable {
    func attributes(_ path: String) throws(Errno) -> FileAttributes
    /// A folder's names and the inode `readdir(3)` gives each (`.` and `..` left out).
    func inodes(_ path: String) throws(Errno) -> [String: UInt64]
    func read(_ path: String, offset: Int64, count: Int) throws(Errno) -> [UInt8]
    func contents(_ path: String) throws(Errno) -> [UInt8]
    func xattr(_ path: String, _ name: String) throws(Errno) -> String
    func xattrNames(_ path: String) throws(Errno) -> [String]
    /// `getxattr(2)` into a buffer of `bufferSize` bytes (0: the size query): the length it gave.
    func xattrLength(_ path: String, _ name: String, bufferSize: Int) throws(Errno) -> Int
    /// `listxattr(2)` into a buffer of `bufferSize` bytes (0: the size query): the length it gave.
    func xattrNamesLength(_ path: String, bufferSize: Int) throws(Errno) -> Int
    func setXattr(_ path: String, _ name: String, _ value: String) throws(Errno)
    func removeXattr(_ path: String, _ name: String) throws(Errno)
    /// Writes `text` in one write to a fresh open of `path` (the control file).
    func write(_ path: String, _ text: String) throws(Errno)
    /// Opens `path` for writing as the shell does: `>` (`O_TRUNC`), or `>>` when `append`
    /// (`O_APPEND`); the caller closes it.
    func openForWriting(_ path: String, append: Bool) throws(Errno) -> any WritableItem
    /// `rm`.
    func remove(_ path: String) throws(Errno)
    /// `statvfs(3)` of the mount (`df`, `df -i`).
    func statistics() throws(Errno) -> FileSystemStatistics
    /// Opens `path` for reading; the caller closes it.
    func open(_ path: String) throws(Errno) -> any OpenItem
    /// Tries a change a read-only library refuses; the errno it got (nil: it was done).
    func refusal(_ change: Change, _ path: String) -> Errno?
}

extension LibraryMount {
    /// A folder's names, sorted.
    func names(_ path: String) throws(Errno) -> [String] { try inodes(path).keys.sorted() }
}

/// A file open for reading.
protocol OpenItem: Sendable {
    func read(offset: Int64, count: Int) throws(Errno) -> [UInt8]
    func close()
}

/// A file open for writing (the control file).
protocol WritableItem {
    /// One `write(2)`: the count it took.
    func write(_ bytes: [UInt8]) throws(Errno) -> Int
    /// `close(2)`: the error of the flush it makes.
    func close() throws(Errno)
}

extension WritableItem {
    func write(_ text: String) throws(Errno) -> Int { try write(Array(text.utf8)) }
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
