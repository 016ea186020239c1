import Foundation
import OfflineStore
import OfflineTestSupport
import Testing

/// `.events` through a real mount: progress lines while an item downloads, and one line per
/// item a sync discovers.
extension RealMounts {
@Suite(.serialized,
       .enabled(if: FUSEAvailability.hasDevFuse, "no /dev/fuse"),
       .enabled(if: FUSEAvailability.hasFusermount, "no fusermount3 in PATH"))
struct EventLinesMountTests {
    static func lines(_ fixture: LibraryFixture, kind: String) -> [String] {
        let text = (try? String(contentsOfFile: fixture.path(".events"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map(String.init).filter { $0.contains("\"kind\":\"\(kind)\"") }
    }

    @Test func aDownloadFromAThrottledOriginWritesProgressLines() throws {
        let fixture = try LibraryFixture()
        let source = try fixture.addSource("acme")
        let item = try #require(try fixture.merge(source, [ItemSpec(contentID: "big", title: "Big", size: 64 << 20)])["big"])
        let name = try #require(item.fileName)
        let mediaURL = try #require(item.mediaURL.flatMap(URL.init(string:)))
        fixture.origin.setFault(mediaURL.path, .trickle(bytesPerSecond: 12 << 20))
        try withMount(fixture) { (_: MountedLibrary) throws in
            #expect(fixture.control("download sources/acme/\(name)\n") == nil)
            #expect(try eventually(within: 40) { try fixture.current(item).state == .cached })
            let progress = Self.lines(fixture, kind: "progress")
            #expect(progress.count >= 3, "\(progress)")
            #expect(progress.allSatisfy { $0.contains("of 64.0 MiB") })
        }
    }

    @Test func aSyncOfTenNewItemsWritesTenDiscoveredLinesWithTheirPaths() throws {
        let fixture = try LibraryFixture()
        let source = try fixture.addSource("acme")
        let items = (1...10).map { #"{"id": "n\#($0)", "title": "New \#($0)", "type": "video", "url": "\#(fixture.origin.url("/n\($0).mp4"))"}"# }
        let feedPath = try #require(URL(string: source.feedURL)).path
        fixture.origin.serve(feedPath, .text(#"{"offlinefs": 1, "items": [\#(items.joined(separator: ", "))]}"#, contentType: "application/json"))
        try withMount(fixture) { (_: MountedLibrary) throws in
            #expect(fixture.control("sync acme\n") == nil)
            #expect(eventually(within: 20) { Self.lines(fixture, kind: "discovered").count >= 10 })
            let discovered = Self.lines(fixture, kind: "discovered")
            #expect(discovered.count == 10)
            for n in 1...10 {
                #expect(discovered.contains { $0.contains("discovered sources/acme/New \(n) [n\(n)].mp4") }, "n\(n)")
            }
        }
    }
}
}
