import Foundation
import OfflineStore
import OfflineTestSupport
import Testing

/// `.events` in both setups: progress lines while an item downloads, and one line per item a
/// sync discovers.
extension RealMounts {
@Suite(.serialized)
struct EventLinesMountTests {
    static func lines(_ mount: any LibraryMount, kind: String) -> [String] {
        let text = String(decoding: (try? mount.contents(".events")) ?? [], as: UTF8.self)
        return text.split(separator: "\n").map(String.init).filter { $0.contains("\"kind\":\"\(kind)\"") }
    }

    @Test(arguments: MountSetup.available)
    func aDownloadFromAThrottledOriginWritesProgressLines(_ setup: MountSetup) throws {
        let fixture = try LibraryFixture()
        let source = try fixture.addSource("acme")
        let item = try #require(try fixture.merge(source, [ItemSpec(contentID: "big", title: "Big", size: 64 << 20)])["big"])
        let name = try #require(item.fileName)
        let mediaURL = try #require(item.mediaURL.flatMap(URL.init(string:)))
        fixture.origin.setFault(mediaURL.path, .trickle(bytesPerSecond: 12 << 20))
        try withLibraryMount(setup, fixture) { (mount: any LibraryMount) throws in
            try mount.write(".control", "download sources/acme/\(name)\n")
            #expect(eventually(within: 40) { try fixture.current(item).state == .cached })
            let progress = Self.lines(mount, kind: "progress")
            #expect(progress.count >= 3, "\(progress)")
            #expect(progress.allSatisfy { $0.contains("of 64.0 MiB") })
        }
    }

    @Test(arguments: MountSetup.available)
    func aSyncOfTenNewItemsWritesTenDiscoveredLinesWithTheirPaths(_ setup: MountSetup) throws {
        let fixture = try LibraryFixture()
        let source = try fixture.addSource("acme")
        let items = (1...10).map { #"{"id": "n\#($0)", "title": "New \#($0)", "type": "video", "url": "\#(fixture.origin.url("/n\($0).mp4"))"}"# }
        let feedPath = try #require(URL(string: source.feedURL)).path
        fixture.origin.serve(feedPath, .text(#"{"offlinefs": 1, "items": [\#(items.joined(separator: ", "))]}"#, contentType: "application/json"))
        try withLibraryMount(setup, fixture) { (mount: any LibraryMount) throws in
            try mount.write(".control", "sync acme\n")
            #expect(eventually(within: 20) { Self.lines(mount, kind: "discovered").count >= 10 })
            let discovered = Self.lines(mount, kind: "discovered")
            #expect(discovered.count == 10)
            for n in 1...10 {
                #expect(discovered.contains { $0.contains("discovered sources/acme/New \(n) [n\(n)].mp4") }, "n\(n)")
            }
        }
    }
}
}
