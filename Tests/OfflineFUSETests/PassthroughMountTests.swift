import OfflineTestSupport
import OfflineFUSE
import Foundation
import Synchronization
import Testing

/// FUSE passthrough through a real mount: `passthrough.bin` of `fuse-example` is opened with its
/// reads passed to the backing file in the kernel whenever INIT granted it.
@Suite(.enabled(if: FUSEAvailability.hasDevFuse, "no /dev/fuse"),
       .enabled(if: FUSEAvailability.hasFusermount, "no fusermount3 in PATH"))
struct PassthroughMountTests {
    @Test func passthroughFileReadsItsBackingBytesWhateverTheKernelOffers() throws {
        try withExampleMount { mount in
            let data = try #require(FileManager.default.contents(atPath: mount.path("passthrough.bin")))
            #expect(Array(data) == mount.spliceBytes)
            let handle = try #require(FileHandle(forReadingAtPath: mount.path("passthrough.bin")))
            defer { try? handle.close() }
            try handle.seek(toOffset: 123_457)
            #expect(Array(try #require(try handle.read(upToCount: 5000))) == Array(mount.spliceBytes[123_457..<128_457]))
        }
    }

    @Test(.enabled(if: FUSEAvailability.hasPassthrough, "no FUSE passthrough: kernel before 6.9, or not root"))
    func passthroughReadsNeverReachTheFilesystem() throws {
        try withExampleMount { mount in
            let granted = KernelFeatures(rawValue: UInt64(try xattrString(mount.mountpoint, "user.kernel-features")) ?? 0)
            #expect(granted.contains(.passthrough))
            let path = mount.path("passthrough.bin")

            // Four readers at once (one shared backing file), then an mmap.
            let expected = mount.spliceBytes
            let matches = Atomic<Int>(0)
            DispatchQueue.concurrentPerform(iterations: 4) { _ in
                if FileManager.default.contents(atPath: path).map(Array.init) == expected {
                    matches.add(1, ordering: .relaxed)
                }
            }
            #expect(matches.load(ordering: .relaxed) == 4)
            let concurrent = try (0..<4).map { _ in try #require(FileHandle(forReadingAtPath: path)) }
            for handle in concurrent { #expect(Array(try handle.readToEnd() ?? Data()) == mount.spliceBytes) }
            for handle in concurrent { try handle.close() }
            let mapped = try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)
            #expect(Array(mapped) == mount.spliceBytes)

            #expect(try xattrString(path, "user.reads") == "0")
            #expect(Int(try xattrString(path, "user.passthrough-opens")) ?? 0 >= 9)
        }
    }
}
