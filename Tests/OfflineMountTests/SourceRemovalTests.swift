import Foundation
import OfflineEngine
import OfflineFUSE
import OfflineStore
import Testing

/// `source remove` forgets a source, its items and their cached files (offlinefs(1)), in both
/// setups; an item a reader has open keeps its files until its last close, as unlink waits.
extension RealMounts {
@Suite(.serialized)
struct SourceRemovalTests {
    @Test(arguments: MountSetup.available)
    func removingASourceRemovesItsCachedFilesOnceTheirReadersClose(_ setup: MountSetup) throws {
        let library = try StandardLibrary()
        let fixture = library.fixture
        func hasFiles(_ key: String) -> Bool {
            FileManager.default.fileExists(atPath: fixture.library.folder.path + "/cache/\(library.items[key]!.id)")
        }
        #expect(hasFiles("ep-001") && hasFiles("ep-002") && hasFiles("b-1"))
        try withLibraryMount(setup, fixture) { (mount: any LibraryMount) throws in
            let open = try mount.open("sources/acme/\(StandardLibrary.tiny)")
            try mount.write(".control", "source remove acme\n")
            // The closed items' files go at once, the open one's stay while it is read
            #expect(!hasFiles("ep-001"))
            #expect(hasFiles("ep-002"))
            #expect(try open.read(offset: 0, count: 1).count == 1)
            open.close()
            #expect(eventually { !hasFiles("ep-002") })
            // The other source keeps its own
            #expect(hasFiles("b-1"))
            #expect(throws: Errno.noSuchFileOrDirectory) { try mount.names("sources/acme") }
        }
    }

    /// Cache folders a process left when it ended between removing items and their files (or
    /// that a version before this fix never removed) go when the next engine starts.
    @Test func anEngineRemovesCacheFoldersWhoseItemIsGone() throws {
        let library = try StandardLibrary()
        let fixture = library.fixture
        let cache = fixture.library.folder.path + "/cache"
        try FileManager.default.createDirectory(atPath: cache + "/987654/media", withIntermediateDirectories: true)
        let engine = try Engine(library: fixture.library)
        engine.start()
        defer { engine.stop() }
        #expect(eventually { !FileManager.default.fileExists(atPath: cache + "/987654") })
        #expect(FileManager.default.fileExists(atPath: cache + "/\(library.items["ep-001"]!.id)"))
    }
}
}
