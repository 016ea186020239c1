import Foundation
import OfflineEngine
import OfflineTestSupport
import OfflineStore
import Synchronization
import Testing

/// Cached media read in the kernel straight from the cache file (FUSE passthrough): seen from
/// outside, such a read needs no daemon at all, so it completes while the daemon is stopped.
extension RealMounts {
@Suite(.serialized,
       .enabled(if: FUSEAvailability.hasDevFuse, "no /dev/fuse"),
       .enabled(if: FUSEAvailability.hasFusermount, "no fusermount3 in PATH"),
       .enabled(if: FUSEAvailability.hasPassthrough, "no FUSE passthrough: kernel before 6.9, or not root"))
struct PassthroughTests {
    @Test func aCachedItemReadsWhileTheDaemonIsStopped() throws {
        let library = try StandardLibrary()
        let fixture = library.fixture
        let expected = [UInt8](fixture.originBytes(library.items["ep-001"]!))
        try withMount(fixture) { (mount: MountedLibrary) throws in
            let path = fixture.path("sources/acme/\(StandardLibrary.launch)")
            let fd = open(path, O_RDONLY)  // the open itself needs the daemon
            try #require(fd >= 0)
            defer { close(fd) }
            let read = readWithDaemonStopped(fd, size: expected.count, daemon: mount.daemon)
            #expect(read != nil, "the read waited for the stopped daemon")
            #expect(read.map { $0 == expected } ?? true, "not the origin's bytes")
        }
    }

    @Test func anItemStreamedInWhileOpenPassesThroughOnceItsStreamingOpensClose() throws {
        let library = try StandardLibrary()
        let fixture = library.fixture
        let expected = [UInt8](fixture.originBytes(library.items["ep-004"]!))
        try withMount(fixture) { (mount: MountedLibrary) throws in
            let path = fixture.path("sources/acme/\(StandardLibrary.remote)")
            // Streamed in through the mount: every byte arrives while this open lasts.
            let streaming = open(path, O_RDONLY)
            try #require(streaming >= 0)
            let streamed = readAll(streaming, size: expected.count) == expected
            #expect(streamed, "the streamed read differs from the origin")
            // Whole now, but opened through the mount while the streaming open lasts (the
            // kernel refuses to mix the two on one file): still the origin's bytes.
            let second = open(path, O_RDONLY)
            try #require(second >= 0)
            let secondRead = readAll(second, size: expected.count) == expected
            #expect(secondRead, "the second open's read differs from the origin")
            // Drops the kernel's copy of the mount's file, so a read the daemon would have to
            // answer cannot come from there either.
            #expect(posix_fadvise(second, 0, 0, POSIX_FADV_DONTNEED) == 0)
            close(streaming)
            close(second)
            // From the next open on: in the kernel. The kernel sends the two closes' RELEASE
            // in the background, and an open the daemon answers before it has them is still
            // mixed with them (so not passed through): a few tries, each bounded.
            var read: [UInt8]?
            for _ in 0..<5 where read == nil {
                let third = open(path, O_RDONLY)
                try #require(third >= 0)
                read = readWithDaemonStopped(third, size: expected.count, daemon: mount.daemon, timeout: 2)
                close(third)
            }
            #expect(read != nil, "the read waited for the stopped daemon")
            #expect(read.map { $0 == expected } ?? true, "not the origin's bytes")
        }
    }
}
}

private func readAll(_ fd: Int32, size: Int) -> [UInt8] {
    var buffer = [UInt8](repeating: 0, count: size + 1)
    var total = 0
    while total < buffer.count {
        let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + total, $0.count - total, off_t(total)) }
        if count <= 0 { break }
        total += count
    }
    return Array(buffer[0..<total])
}

/// Reads all of `fd` with the daemon stopped (SIGSTOP). A read that needs the daemon waits
/// for it: after 10 s the daemon is continued, so the read ends, and `nil` says it waited.
private func readWithDaemonStopped(_ fd: Int32, size: Int, daemon: ChildProcess.Running, timeout: Double = 10) -> [UInt8]? {
    let result = Mutex<[UInt8]?>(nil)
    let done = DispatchSemaphore(value: 0)
    daemon.kill(SIGSTOP)
    DispatchQueue.global().async {
        let bytes = readAll(fd, size: size)
        result.withLock { $0 = bytes }
        done.signal()
    }
    let inTime = done.wait(timeout: .now() + timeout) == .success
    daemon.kill(SIGCONT)
    if !inTime { done.wait() }
    return inTime ? result.withLock { $0 } : nil
}
