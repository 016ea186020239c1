import Foundation
@testable import OfflineEngine
import OfflineStore
import Testing

/// What a user may type for an item (offlinefs(1), "Items"): an id, `source/content-id`, or a
/// path inside the mount, with or without the mount point in front.
@Suite struct ItemReferenceTests {
    @Test func pathsWithOrWithoutTheMountPointNameTheItem() throws {
        let f = try EngineFixture()
        defer { f.close() }
        let item = try f.addItem("a.mp4", size: 1000)
        let name = try #require(item.fileName)
        for reference in ["\(item.id)", "src/a.mp4", "sources/src/\(name)", "/sources/src/\(name)", "./sources/src/\(name)",
                          "/media/library/sources/src/\(name)", "/home/me/sources/mnt/state/discovered/\(name)",
                          "recent/\(name)"] {
            #expect(try ItemReference.resolve(reference, in: f.store).id == item.id, "\(reference)")
        }
        for reference in ["/media/library/\(name)", "sources/\(name)", "src/b.mp4", "sources/src/b.mp4"] {
            #expect(throws: EngineError.self, "\(reference)") { try ItemReference.resolve(reference, in: f.store) }
        }
    }

    /// Listed as `state/failed/[<content id>]`, the one path it has.
    @Test func anItemWhoseLookupFailedIsNamedByItsPath() throws {
        let f = try EngineFixture()
        defer { f.close() }
        let source = try #require(try f.store.source(named: "src"))
        let pending = try f.store.addPendingItem(sourceID: source.id, contentID: "nope")
        try f.store.setState(itemID: pending.id, state: .failed)
        #expect(try ItemReference.resolve("state/failed/[nope]", in: f.store).id == pending.id)
        #expect(try ItemReference.resolve("/mnt/offline/state/failed/[nope]", in: f.store).id == pending.id)
        #expect(throws: EngineError.self) { try ItemReference.resolve("state/failed/[other]", in: f.store) }
    }
}
