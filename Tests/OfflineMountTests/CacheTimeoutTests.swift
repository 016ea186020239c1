@testable import OfflineMount
import Testing

/// How long the kernel may keep what the mount tells it (docs/control.md, "Change
/// notification"): long for what the tree holds and notifies, a second at most for sizes that
/// grow outside it, never for the hidden files and HLS parts.
struct CacheTimeoutTests {
    @Test func namesAndTheTreesAttributesAreKeptAMinuteByDefault() throws {
        #expect(MountOptions().cacheTimeout == 60)
        #expect(try MountOptions.parse(["cache-timeout=5s"]).cacheTimeout == 5)
        let hlsItem: Int64 = 7
        func timeout(_ node: NodeID?, _ cacheTimeout: Double = 60) -> Double {
            OfflineFileSystem.attributeTimeout(for: node, cacheTimeout: cacheTimeout) { $0 == hlsItem }
        }
        // Folders and media, whose every change is notified
        #expect(timeout(.root) == 60)
        #expect(timeout(.source(3)) == 60)
        #expect(timeout(.itemFile(itemID: 1, file: 0)) == 60)
        // Sizes the tree does not hold: side files, an HLS item's playlist
        #expect(timeout(.itemFile(itemID: 1, file: 1)) == 1)
        #expect(timeout(.itemFile(itemID: hlsItem, file: 0)) == 1)
        #expect(timeout(.itemFile(itemID: 1, file: 1), 0.5) == 0.5)
        // Never kept
        #expect(timeout(.hidden(.events)) == 0)
        #expect(timeout(.hlsPart(itemID: hlsItem, part: 0)) == 0)
    }
}
