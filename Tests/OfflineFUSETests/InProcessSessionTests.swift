import OfflineTestSupport
import OfflineFUSE
import CFuseShim
import Dispatch
import Foundation
@testable import OfflineFUSE
import Synchronization
import Testing

/// One file whose bytes the test changes; the kernel caches them (`keepCache`, long timeouts)
/// until told otherwise.
private final class VersionedFileSystem: FileSystemOperations {
    static let file: UInt64 = 2
    let content = Mutex(Array("v1\n".utf8))  // protected: the file's bytes
    let destroyed = Atomic<Bool>(false)

    private func attributes(_ inode: UInt64) -> FileAttributes? {
        switch inode {
        case rootInode: return .directory(inode: rootInode)
        case Self.file: return .file(inode: Self.file, size: UInt64(content.withLock { $0.count }))
        default: return nil
        }
    }

    func lookup(parent: UInt64, name: FileName, reply: Reply<Entry>) {
        guard parent == rootInode, name == "version.txt", let attributes = attributes(Self.file) else {
            return reply.succeed(.negative(timeout: 60))
        }
        reply.succeed(Entry(attributes: attributes, attributeTimeout: 60, entryTimeout: 60))
    }

    func getattr(inode: UInt64, file: FileInfo?, reply: Reply<FileAttributes>) {
        guard let attributes = attributes(inode) else { return reply.fail(.noSuchFileOrDirectory) }
        reply.succeed(attributes, timeout: 60)
    }

    func open(inode: UInt64, file: FileInfo, reply: Reply<FileInfo>) {
        var opened = file
        opened.keepCache = true
        reply.succeed(opened)
    }

    func read(inode: UInt64, size: Int, offset: Int64, file: FileInfo, reply: Reply<ReadData>) {
        let bytes = content.withLock { $0 }
        reply.succeed(bytes: Array(bytes.dropFirst(Int(offset)).prefix(size)))
    }

    func destroy() { destroyed.store(true, ordering: .releasing) }
}

/// The session API in this process: `run` on a thread, `exit()` from another, notifications.
/// Only child processes touch the mount (a process reading its own mount can deadlock).
@Suite(.enabled(if: FUSEAvailability.hasDevFuse, "no /dev/fuse"),
       .enabled(if: FUSEAvailability.hasFusermount, "no fusermount3 in PATH"))
struct InProcessSessionTests {
    @Test func notificationInvalidatesCacheAndExitEndsRun() throws {
        // Given: a session mounted here, served by a thread of its own
        let directory = NSTemporaryDirectory() + "offlinefuse-inproc-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer {
            if MountTable.isMounted(directory) { _ = try? ChildProcess.run(["umount", "-l", directory]) }
            try? FileManager.default.removeItem(atPath: directory)
        }
        let fs = VersionedFileSystem()
        let session = try FUSESession(mountpoint: directory, options: ["default_permissions", "fsname=inproc"],
                                      operations: fs)
        let ended = DispatchSemaphore(value: 0)
        let outcome = Mutex<Result<FUSESession.LoopEnd, FUSESessionError>?>(nil)
        Thread {
            let result = Result { () throws(FUSESessionError) in try session.run(maxIdleThreads: 2) }
            outcome.withLock { $0 = result }
            ended.signal()
        }.start()
        var runEnded = false
        defer {
            // After a failure: end the loop before destroying the session under it.
            if !runEnded {
                session.exit()
                _ = ended.wait(timeout: .now() + 5)
            }
            session.close()
        }
        #expect(MountTable.wait(for: directory, mounted: true))
        let path = directory + "/version.txt"
        #expect(try ChildProcess.run(["cat", path]).stdout == "v1\n")

        // When the bytes change (same size, same times), the kernel still serves its cache…
        fs.content.withLock { $0 = Array("v2\n".utf8) }
        #expect(try ChildProcess.run(["cat", path]).stdout == "v1\n")

        // …until the filesystem tells it (from the notifier thread)
        let before = session.notifier.sentCount
        session.notifyInvalidateInode(VersionedFileSystem.file)
        let deadline = Date().addingTimeInterval(5)
        while session.notifier.sentCount == before && Date() < deadline { usleep(1_000) }
        #expect(try ChildProcess.run(["cat", path]).stdout == "v2\n")

        // When exit() is called from this thread, run returns and the mount is gone
        session.exit()
        runEnded = ended.wait(timeout: .now() + 5) == .success
        #expect(runEnded)
        #expect(outcome.withLock { $0.map { (try? $0.get()) == .ended } } == true)
        #expect(!MountTable.isMounted(directory))
        session.close()
        let destroyed = fs.destroyed.load(ordering: .acquiring)
        #expect(destroyed)
    }
}

/// The parts of the binding that need no kernel.
struct BindingValueTests {
    @Test func maxReadIsFoundInCommaSeparatedOptions() {
        #expect(FUSESession.maxRead(in: ["ro,max_read=131072", "nodev"]) == 131_072)
        #expect(FUSESession.maxRead(in: ["max_read=4096", "max_read=8192"]) == 8192)
        #expect(FUSESession.maxRead(in: ["default_permissions"]) == nil)
    }

    @Test func errnoConversionMapsForeignErrorsToEIO() {
        struct Other: Error {}
        #expect(Errno(converting: Errno.keyExpired) == .keyExpired)
        #expect(Errno(converting: Other()) == .ioError)
        #expect(Errno.noData.rawValue == ENODATA)
    }

    @Test func fileNamesKeepInvalidUTF8AsBytes() {
        #expect(FileName(bytes: [0x66, 0xFF]).string == nil)
        #expect(FileName("café").string == "café")
        #expect(FileName(".").isDotOrDotDot && FileName("..").isDotOrDotDot && !FileName("...").isDotOrDotDot)
    }

    @Test func negativeEntryHasInodeZeroAndTimeout() {
        let entry = Entry.negative(timeout: 5)
        #expect(entry.isNegative && entry.entryTimeout == 5 && entry.param.ino == 0)
    }
}
