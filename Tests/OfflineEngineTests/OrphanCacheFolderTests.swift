import Foundation
@testable import OfflineEngine
import Testing

/// The sweep of cache folders whose item is gone (`Library.removeOrphanCacheFolders`).
struct OrphanCacheFolderTests {
    /// An item removed while a reader has it open keeps its files to the last close; the
    /// sweep, which may run meanwhile (it starts with the engine), leaves them too.
    @Test func theSweepRemovesFoldersOfGoneItemsButNotThoseInUse() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("offlinefs-orphans-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let library = try Library(folder: folder)
        let cache = CacheLayout.cacheFolder(library: folder).path
        for id in [41, 42] { try FileManager.default.createDirectory(atPath: "\(cache)/\(id)", withIntermediateDirectories: true) }
        library.removeOrphanCacheFolders(inUse: { $0 == 42 })
        #expect(!FileManager.default.fileExists(atPath: "\(cache)/41"))
        #expect(FileManager.default.fileExists(atPath: "\(cache)/42"))
    }
}
