import Foundation
import Logging
import OfflineEngine
import OfflineFUSE
@testable import OfflineMount
import OfflineStore
import Testing

/// A control line the library cannot record because its disk is full is answered ENOSPC, not
/// EINVAL: the refusal cannot reach `.events` either, so the errno is all the writer gets.
@Suite(.serialized) struct ControlFileDiskFullTests {
    @Test func aCommandOnAFullDiskIsNoSpace() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("offlinefs-full-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let mount = Process()
        mount.executableURL = URL(fileURLWithPath: "/bin/mount")
        mount.arguments = ["-t", "tmpfs", "-o", "size=2m", "tmpfs", folder.path]
        try mount.run()
        mount.waitUntilExit()
        try #require(mount.terminationStatus == 0, "no tmpfs for the test (mount -t tmpfs failed)")
        defer { _ = try? Process.run(URL(fileURLWithPath: "/bin/umount"), arguments: ["-l", folder.path]).waitUntilExit() }

        // Given a library on a disk then filled to the last byte
        let library = try Library(folder: folder.appendingPathComponent("library"))
        _ = try library.addSource(name: "acme", feedURL: "http://127.0.0.1:9/feed.json")
        let filler = FileHandle(forWritingAtPath: {
            let path = folder.appendingPathComponent("filler").path
            FileManager.default.createFile(atPath: path, contents: nil)
            return path
        }())
        let block = Data(count: 4096)
        while (try? filler?.write(contentsOf: block)) != nil {}
        try? filler?.close()
        let control = ControlFile(performer: LibraryCommands(library: library), view: LibraryView(store: library.store),
                                  logger: Logger(label: "test"), afterCommands: {})
        // When a policy is set through the control file
        let handle = control.open()
        let result = control.write(handle: handle, data: Array("set retry-limit 7\n".utf8), owner: 1)
        // Then the write says the disk is full, and the policy is as it was
        guard case .failure(let errno) = result else { Issue.record("the write succeeded on a full disk"); return }
        #expect(errno == .noSpace)
        #expect(try library.policies().first { $0.name == "retry-limit" }?.value != "7")
        // And a line that cannot parse is still EINVAL
        guard case .failure(let parse) = control.write(handle: handle, data: Array("frobnicate\n".utf8), owner: 1) else {
            Issue.record("a bad line was accepted"); return
        }
        #expect(parse == .invalidArgument)
        control.release(handle: handle)
        try library.store.close()
    }
}
