import OfflineTestSupport
import OfflineFUSE
import CFuseShim
import Foundation
import Testing

/// The binding through a real mount: `fuse-example` runs as a child process; the tests reach
/// the mount through programs (`ls`, `cat`) and direct syscalls.
@Suite(.enabled(if: FUSEAvailability.hasDevFuse, "no /dev/fuse"),
       .enabled(if: FUSEAvailability.hasFusermount, "no fusermount3 in PATH"))
struct ExampleMountTests {
    @Test func listingShowsNamesSizesAndModes() throws {
        try withExampleMount { mount in
            // When
            let ls = try ChildProcess.run(["ls", "-l", "--time-style=+", mount.mountpoint])
            // Then
            #expect(ls.status == 0, "\(ls.stderr)")
            let lines = ls.stdout.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true) }
            func line(_ name: String) -> [Substring]? { lines.first { $0.last.map(String.init) == name } }
            #expect(line("hello.txt")?.first == "-rw-r--r--")
            #expect(line("hello.txt")?[4] == "14")
            #expect(line("spliced.bin")?[4] == "300000")
            #expect(line("docs")?.first == "drwxr-xr-x")
            #expect(line("many")?.first == "drwxr-xr-x")
            #expect(ls.stderr.isEmpty)
        }
    }

    @Test func catReturnsContentAndDelayedReplyArrives() throws {
        try withExampleMount { mount in
            let hello = try ChildProcess.run(["cat", mount.path("hello.txt"), mount.path("docs/readme.md")])
            #expect(hello.status == 0)
            #expect(hello.stdout == "Hello, world!\n# Read me\n")

            // The read is answered 50 ms later from a Dispatch thread, not the libfuse worker.
            let delayed = try ChildProcess.run(["cat", mount.path("delayed.txt")])
            #expect(delayed.status == 0)
            #expect(delayed.stdout == "arrived later\n")
        }
    }

    @Test func splicedReadReturnsTheFileBytes() throws {
        try withExampleMount { mount in
            let data = try #require(FileManager.default.contents(atPath: mount.path("spliced.bin")))
            #expect(data.count == mount.spliceBytes.count)
            #expect(Array(data) == mount.spliceBytes)
            // An unaligned read in the middle goes through the same fd + offset path.
            let handle = try #require(FileHandle(forReadingAtPath: mount.path("spliced.bin")))
            defer { try? handle.close() }
            try handle.seek(toOffset: 123_457)
            let middle = try #require(try handle.read(upToCount: 5000))
            #expect(Array(middle) == Array(mount.spliceBytes[123_457..<128_457]))
        }
    }

    @Test func lookupOfMissingNameFails() throws {
        try withExampleMount { mount in
            var status = stat()
            #expect(stat(mount.path("missing.txt"), &status) == -1)
            #expect(errno == ENOENT)
            // The negative entry is cached: a second stat answers the same.
            #expect(stat(mount.path("missing.txt"), &status) == -1 && errno == ENOENT)
        }
    }

    @Test func readdirOfThousandLongNamesListsEachOnceWithStatInodes() throws {
        try withExampleMount { mount in
            // When: list through libc (getdents in several FUSE readdir calls)
            let folder = mount.path("many")
            let dir = try #require(opendir(folder))
            var listed: [String: UInt64] = [:]
            var duplicates = 0
            while let entry = readdir(dir) {
                let name = withUnsafePointer(to: entry.pointee.d_name) {
                    $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
                }
                if name == "." || name == ".." { continue }
                if listed.updateValue(UInt64(entry.pointee.d_ino), forKey: name) != nil { duplicates += 1 }
            }
            closedir(dir)

            // Then: every name once, inode numbers as stat gives them
            #expect(duplicates == 0)
            #expect(listed.count == 1000)
            let expected = Set((0..<1000).map { "entry-\($0)-" + String(repeating: "x", count: 200 - "entry-\($0)-".utf8.count) })
            #expect(Set(listed.keys) == expected)
            var mismatches = 0
            for (name, inode) in listed {
                var status = stat()
                if stat(folder + "/" + name, &status) != 0 || UInt64(status.st_ino) != inode { mismatches += 1 }
            }
            #expect(mismatches == 0)
            let calls = Int(try xattrString(folder, "user.readdir-calls")) ?? 0
            #expect(calls > 2, "1000 names of 200 bytes cannot fit one readdir buffer")
        }
    }

    @Test func xattrSizeQueryRangeAndMissing() throws {
        try withExampleMount { mount in
            let file = mount.path("hello.txt")
            // Size-0 query returns the length.
            #expect(getxattr(file, "user.example", nil, 0) == 8)
            // Too small a buffer: ERANGE.
            var small = [UInt8](repeating: 0, count: 3)
            #expect(getxattr(file, "user.example", &small, small.count) == -1)
            #expect(errno == ERANGE)
            // Enough room: the value.
            try #expect(xattrString(file, "user.example") == "value-42")
            // Unknown name: ENODATA (never ENOSYS, which would disable xattrs).
            var buffer = [UInt8](repeating: 0, count: 64)
            #expect(getxattr(file, "user.missing", &buffer, buffer.count) == -1)
            #expect(errno == ENODATA)
            // The list, size query then value.
            #expect(listxattr(file, nil, 0) == "user.example\0".utf8.count)
            let count = listxattr(file, &buffer, buffer.count)
            #expect(String(decoding: buffer[0..<max(0, count)], as: UTF8.self) == "user.example\0")
            // Other files still answer (ENODATA), so xattrs were not disabled.
            #expect(getxattr(mount.path("docs/readme.md"), "user.example", &buffer, buffer.count) == -1 && errno == ENODATA)
        }
    }

    @Test func writesAreRefusedWithTheFileSystemsErrno() throws {
        try withExampleMount { mount in
            let file = mount.path("hello.txt")
            #expect(open(file, O_WRONLY) == -1 && errno == EACCES)
            #expect(open(file, O_RDWR | O_TRUNC) == -1 && errno == EACCES)
            #expect(truncate(file, 0) == -1 && errno == EACCES)
            #expect(mkdir(mount.path("new"), 0o755) == -1 && errno == EPERM)
            #expect(rename(file, mount.path("renamed.txt")) == -1 && errno == EPERM)
            #expect(unlink(file) == -1 && errno == EPERM)
            #expect(setxattr(file, "user.example", "x", 1, 0) == -1 && errno == EPERM)
            #expect(open(mount.path("created.txt"), O_CREAT | O_WRONLY, 0o644) == -1 && errno == EPERM)
            let shell = try ChildProcess.run(["sh", "-c", "echo x > '\(file)'"])
            #expect(shell.status != 0)
            #expect(shell.stderr.contains("Permission denied"))
        }
    }

    @Test func interruptAnswersAPendingReadWithEINTR() throws {
        try withExampleMount { mount in
            // Given: a cat blocked in a read the filesystem never answers by itself
            let slow = mount.path("slow.txt")
            let cat = try ChildProcess.start(["cat", slow])
            let started = Date().addingTimeInterval(5)
            while (try? xattrString(slow, "user.slow-reads")) != "1" && Date() < started { usleep(2_000) }
            try #expect(xattrString(slow, "user.slow-reads") == "1")

            // When: Ctrl-C (the kernel sends FUSE_INTERRUPT; a fatal signal waits for the answer)
            let sent = Date()
            cat.kill(SIGINT)

            // Then: answered at once by the interrupt handler, not after the 10 s bound
            try #require(cat.wait(deadline: 3))
            #expect(Date().timeIntervalSince(sent) < 3)
            #expect(cat.result().signal == SIGINT)
            try #expect(xattrString(slow, "user.interrupts") == "1")
        }
    }

    @Test func unmountIsClean() throws {
        let mount = try ExampleMount()
        defer { mount.cleanUp() }
        #expect(MountTable.isMounted(mount.mountpoint))
        let (fusermount, daemon) = try mount.unmount()
        #expect(fusermount.status == 0, "\(fusermount.stderr)")
        #expect(daemon.status == 0)
        #expect(daemon.signal == nil)
        #expect(daemon.stderr.isEmpty, "\(daemon.stderr)")
        #expect(!MountTable.isMounted(mount.mountpoint))
    }
}

/// An xattr's value as a string, through getxattr(2) with a size query first.
func xattrString(_ path: String, _ name: String) throws -> String {
    let size = getxattr(path, name, nil, 0)
    guard size >= 0 else { throw Failure("getxattr \(name): errno \(errno)") }
    var buffer = [UInt8](repeating: 0, count: size)
    let count = getxattr(path, name, &buffer, size)
    guard count >= 0 else { throw Failure("getxattr \(name): errno \(errno)") }
    return String(decoding: buffer[0..<count], as: UTF8.self)
}
