// fuse-example: mounts ExampleFileSystem for the OfflineFUSE tests.
// Usage: fuse-example <mountpoint> <file served as spliced.bin>
// Ends on unmount (fusermount3 -u) or SIGINT/SIGTERM, exit status 0; errors go to stderr.
#if canImport(Glibc)
import Glibc
#endif
import OfflineFUSE
import Synchronization

func fail(_ message: String) -> Never {
    let line = Array("fuse-example: error: \(message)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(1)
}

let arguments = CommandLine.arguments
guard arguments.count == 3 else { fail("usage: fuse-example <mountpoint> <splice-source>") }
let source = open(arguments[2], O_RDONLY)
guard source >= 0 else { fail("cannot open \(arguments[2]): \(Errno(errno))") }

do {
    let fileSystem = ExampleFileSystem(spliceSource: source, spliceSourcePath: arguments[2])
    let session = try FUSESession(
        mountpoint: arguments[1],
        // max_read exercises the INIT hook that must repeat it (PLATFORM-NOTES).
        options: ["default_permissions", "nosuid", "nodev", "fsname=fuse-example", "subtype=example",
                  "max_read=131072"],
        operations: fileSystem,
        programName: "fuse-example")
    fileSystem.backingFiles.withLock { $0 = session.backingFiles }
    try session.installSignalHandlers()
    try session.run(maxIdleThreads: 4)
    session.close()
} catch {
    fail("\(error)")
}
