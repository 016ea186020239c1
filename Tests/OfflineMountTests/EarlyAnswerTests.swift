import Dispatch
import Foundation
@testable import OfflineMount
import OfflineFUSE
import OfflineStore
import Testing

/// Before the first tree is built, the store answers what it can tell exactly as the tree will
/// (`OfflineFileSystem.earlyEntry`); everything else waits for the tree.
@Suite struct EarlyAnswerTests {
    @Test func aMediaFileIsAnsweredBeforeTheTreeWithWhatTheTreeSays() throws {
        // Given a mount whose first tree build is held
        let library = try StandardLibrary()
        let firstBuild = DispatchSemaphore(value: 0)
        let mount = try DirectMount(library.fixture, holding: firstBuild)
        defer { firstBuild.signal(); mount.stop() }
        let path = "sources/acme/" + StandardLibrary.launch

        // When its media file is looked up and stat'd (on a thread of its own: were the
        // answers to wait for the tree, the test would wait here for ever)
        let answer = Answer()
        let answered = DispatchSemaphore(value: 0)
        Thread {
            answer.result = Result { () throws(Errno) in try mount.attributes(path) }
            answer.inode = try? mount.withInode(path) { $0 }
            answered.signal()
        }.start()
        let answeredInTime = answered.wait(timeout: .now() + 10) == .success

        // Then it was answered with no tree yet, and as the built tree answers (in two
        // categories, `state/cached`, `recent` and `unwatched` as well)
        #expect(answeredInTime, "answered while the first build is held")
        #expect(mount.fileSystem.tree.partial { _ in nil } != nil, "the first build is not done")
        firstBuild.signal()
        if !answeredInTime { answered.wait() }
        let early = try #require(answer.result).get()
        let earlyInode = try #require(answer.inode)
        _ = mount.fileSystem.tree.snapshot
        #expect(mount.fileSystem.tree.partial { _ in nil } == nil, "the first build is done")
        #expect(try mount.withInode(path) { $0 } == earlyInode)
        #expect(try mount.attributes(path) == early)
        #expect(early.linkCount == 6 && early.size == 3_000_000)
    }

    /// A name the store does not know, and a side file, which the store cannot answer for sure.
    @Test(arguments: [("Nothing [x-1].mp4", false), (StandardLibrary.launchSideFiles[0], true)])
    func aNameTheStoreCannotAnswerWaitsForTheTree(name: String, exists: Bool) throws {
        // Given a mount whose first tree build is held
        let library = try StandardLibrary()
        let firstBuild = DispatchSemaphore(value: 0)
        let mount = try DirectMount(library.fixture, holding: firstBuild)
        defer { firstBuild.signal(); mount.stop() }

        // When the name is stat'd
        let answer = Answer()
        let answered = DispatchSemaphore(value: 0)
        Thread {
            answer.result = Result { () throws(Errno) in try mount.attributes("sources/acme/" + name) }
            answered.signal()
        }.start()

        // Then there is no answer while the build is held, and the tree's once it is done
        #expect(answered.wait(timeout: .now() + 1) == .timedOut)
        firstBuild.signal()
        answered.wait()
        let result = try #require(answer.result)
        if exists {
            #expect(try result.get().inode == mount.fileSystem.tree.snapshot.folders[NodeID.source(library.items["ep-001"]!.sourceID).inode]?
                .child(named: FileName(name))?.inode)
        } else {
            #expect(throws: Errno.noSuchFileOrDirectory) { try result.get() }
        }
    }
}

/// One answer, handed over by a semaphore.
private final class Answer: @unchecked Sendable {
    var result: Result<FileAttributes, Errno>?
    var inode: UInt64?
}
