import Foundation
import OfflineFeeds

/// The HLS fixtures in Tests/Fixtures/HLS (ffmpeg-made streams, RFC examples, hostile
/// playlists), read by path so the repository holds one copy of them.
enum HLSFixtures {
    /// Tests/Fixtures/HLS, found from this file's path.
    static let folder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // OfflineFeedsTests
        .deletingLastPathComponent()  // Tests
        .appendingPathComponent("Fixtures/HLS", isDirectory: true)

    /// Where the tests pretend the fixtures are served from: relative URIs resolve under it.
    static let origin = URL(string: "https://cdn.example/hls/")!

    static func data(_ path: String) throws -> Data {
        try Data(contentsOf: folder.appendingPathComponent(path))
    }

    static func url(_ path: String) -> URL {
        URL(string: path, relativeTo: origin)!.absoluteURL
    }

    static func parse(_ path: String, limits: HLSLimits = HLSLimits()) throws -> HLSPlaylist {
        try HLSParser.parse(data(path), url: url(path), limits: limits)
    }

    static func media(_ path: String) throws -> HLSMediaPlaylist {
        guard case .media(let playlist) = try parse(path) else { throw NotThatKind(path: path) }
        return playlist
    }

    static func master(_ path: String) throws -> HLSMasterPlaylist {
        guard case .master(let playlist) = try parse(path) else { throw NotThatKind(path: path) }
        return playlist
    }

    /// The fixture file a parsed URL under `origin` stands for.
    static func file(for url: URL) -> URL? {
        let text = url.absoluteString
        guard text.hasPrefix(origin.absoluteString) else { return nil }
        return folder.appendingPathComponent(String(text.dropFirst(origin.absoluteString.count)))
    }

    struct NotThatKind: Error, CustomStringConvertible {
        var path: String
        var description: String { "\(path) parsed as the other kind of playlist" }
    }
}
