import Foundation
import OfflineEngine
import OfflineStore
import OfflineTestSupport
import Testing

/// A feed that gives a cached item another file (another URL and length): the archivist's
/// repro served the old file on, cached at 100 %, while `getfattr` gave the new size and
/// `ls -l` the old one. The same file at another URL (a CDN move) keeps its bytes.
@Suite struct ReplacedMediaTests {
    private static func feed(url: String, size: Int64) -> String {
        #"{"offlinefs": 1, "items": [{"id": "ep-7", "title": "Seven", "type": "video", "url": "\#(url)", "size": \#(size)}]}"#
    }

    @Test func anotherFileForACachedItemReplacesItsBytesAndIsFetched() throws {
        let f = try EngineFixture()
        defer { f.close() }
        f.origin.serve("/ep7.mp4", .generated(size: 300_000, seed: 7, contentType: "video/mp4"))
        f.origin.serve("/ep7-moved.mp4", .generated(size: 300_000, seed: 7, contentType: "video/mp4"))
        f.origin.serve("/ep7b.mp4", .generated(size: 200_000, seed: 17, contentType: "video/mp4"))
        f.origin.serve("/feed.json", .text(Self.feed(url: "/ep7.mp4", size: 300_000), contentType: "application/json"))
        f.start()
        try f.perform(.sync(source: "src"))
        try waitUntil { (try? f.store.item(source: "src", contentID: "ep-7")) != nil }
        let item = try #require(try f.store.item(source: "src", contentID: "ep-7"))
        try f.perform(.download(item: "src/ep-7", options: DownloadOptions()))
        _ = try f.wait(item, .cached)

        // The same file at another URL: kept, nothing fetched again
        f.origin.serve("/feed.json", .text(Self.feed(url: "/ep7-moved.mp4", size: 300_000), contentType: "application/json"))
        try f.perform(.sync(source: "src"))
        try waitUntil { (try? f.store.item(id: item.id))?.mediaURL?.hasSuffix("/ep7-moved.mp4") == true }
        #expect(try f.item(item).state == .cached && f.item(item).size == 300_000)
        #expect(f.origin.requests(for: "/ep7-moved.mp4").isEmpty)

        // Another file: the old bytes go and the new file is fetched
        f.origin.serve("/feed.json", .text(Self.feed(url: "/ep7b.mp4", size: 200_000), contentType: "application/json"))
        try f.perform(.sync(source: "src"))
        try waitUntil { f.origin.requests(for: "/ep7b.mp4").count > 0 }
        let cached = try f.wait(item, .cached)
        #expect(cached.size == 200_000 && cached.bytesPresent == 200_000)
        let path = f.engine.transfers.fetcher.cacheFilePath(itemID: item.id, file: "media")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(bytes.count == 200_000 && bytes == GeneratedBytes(size: 200_000, seed: 17).bytes(in: 0..<200_000))
    }
}
