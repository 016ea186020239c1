import Foundation
import OfflineEngine
import OfflineStore
import OfflineTestSupport

/// The ffmpeg-made streams of Tests/Fixtures/HLS (`ts`, `fmp4`, `aes`) served by a
/// `TestOrigin`: every file of `Fixtures/HLS/<stream>/` at `/hls/<stream>/<same path>`, so an
/// origin URL names its fixture file and the tests compare cache bytes with it.
enum HLSFixtureStreams {
    /// Tests/Fixtures/HLS, found from this file's path.
    static let folder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // OfflineEngineTests
        .deletingLastPathComponent()  // Tests
        .appendingPathComponent("Fixtures/HLS", isDirectory: true)

    /// Serves every regular file of the fixture `stream` (`ts`, `fmp4`, `aes`) on `origin`.
    static func serve(_ stream: String, on origin: TestOrigin) throws {
        let root = folder.appendingPathComponent(stream, isDirectory: true)
        for relative in try FileManager.default.subpathsOfDirectory(atPath: root.path).sorted() {
            let file = root.appendingPathComponent(relative)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: file.path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            origin.serve("/hls/\(stream)/\(relative)", .file(file.path, contentType: contentType(relative)))
        }
    }

    /// Bytes of a fixture file, e.g. `ts/high/segment-00.ts`.
    static func data(_ path: String) throws -> Data {
        try Data(contentsOf: folder.appendingPathComponent(path))
    }

    /// Segment paths of a fixture rendition: `ts/high` → `ts/high/segment-00.ts`, ….
    static func segments(_ rendition: String, count: Int, ext: String = "ts") -> [String] {
        (0..<count).map { String(format: "%@/segment-%02d.%@", rendition, $0, ext) }
    }

    /// Total bytes of fixture files.
    static func size(_ paths: [String]) throws -> Int64 {
        try paths.reduce(0) { $0 + Int64(try data($1).count) }
    }

    /// The fixture path an origin URL serves (`http://…/hls/ts/high/segment-00.ts` →
    /// `ts/high/segment-00.ts`), nil when it is not under `/hls/`.
    static func fixturePath(of url: URL) -> String? {
        url.path.hasPrefix("/hls/") ? String(url.path.dropFirst("/hls/".count)) : nil
    }

    private static func contentType(_ path: String) -> String {
        switch (path as NSString).pathExtension {
        case "m3u8": "application/vnd.apple.mpegurl"
        case "ts": "video/mp2t"
        case "m4s", "mp4": "video/mp4"
        default: "application/octet-stream"
        }
    }
}

extension TransferFixture {
    /// Lists an HLS item whose media URL is `/hls/<playlist>` on the origin.
    @discardableResult
    func addHLSItem(_ name: String, playlist: String, licence: LicenceTerms? = nil) throws -> Item {
        try addEntry(CatalogEntry(contentID: name, title: name, type: .hls, mediaURL: origin.url("/hls/\(playlist)"),
                                  mimeType: "application/vnd.apple.mpegurl", licence: licence))
    }

    /// Records the `quality=` and `partial=` of a download request, as the `download`
    /// command does, for downloads started directly through the downloader.
    func request(_ item: Item, quality: String? = nil, partialSeconds: Double? = nil) throws {
        try store.setRequested(itemID: item.id, true, quality: quality, partialSeconds: partialSeconds)
    }

    /// The rendition the engine chose for `item`.
    func stream(_ item: Item) -> HLSStream? {
        engine.hls.stream(itemID: item.id)
    }

    /// `[present, total]` segments of the chosen rendition.
    func segmentProgress(_ item: Item) -> [Int]? {
        engine.hls.segmentProgress(itemID: item.id).map { [$0.present, $0.total] }
    }

    /// The whole cache file behind an HLS part (its `hls.<n>` file).
    func cachedBytes(_ item: Item, part: HLSPart) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: fetcher.cacheFilePath(itemID: item.id, file: part.resource)))
    }

    /// Paths of origin requests whose path starts with `prefix`, in order.
    func requestedPaths(_ prefix: String = "/hls/") -> [String] {
        origin.requests.map(\.path).filter { $0.hasPrefix(prefix) }
    }
}
