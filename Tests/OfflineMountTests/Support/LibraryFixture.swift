import Foundation
import OfflineEngine
import OfflineMount
import OfflineStore
import OfflineTestSupport
import Testing

/// One item a test puts in the catalog; its bytes are generated from `seed` and served by
/// the test origin at `/m/<index>`.
struct ItemSpec {
    var contentID: String
    var title: String
    var size: Int64
    var seed: UInt64 = 1
    var mimeType = "video/mp4"
    var categories: [[String]] = []
    var thumbnail = false
    var subtitles: [String] = []
    var licence: LicenceTerms?
    var published = Date(timeIntervalSince1970: 1_700_000_000)
}

/// A temporary library filled through the store's API, with an origin serving the items'
/// bytes. The folder is world-readable so an unprivileged user can reach it.
final class LibraryFixture {
    let directory: String
    let libraryPath: String
    let mountpoint: String
    let origin: TestOrigin
    private(set) var library: Library
    private var bytes: [Int64: GeneratedBytes] = [:]
    private var served = 0

    init() throws {
        var template = Array("/tmp/offlinemount-test-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw Failure("mkdtemp failed") }
        directory = String(cString: made)
        chmod(directory, 0o755)
        libraryPath = directory + "/library"
        mountpoint = directory + "/mnt"
        try FileManager.default.createDirectory(atPath: mountpoint, withIntermediateDirectories: false)
        origin = try TestOrigin()
        library = try Library(folder: URL(fileURLWithPath: libraryPath))
    }

    deinit {
        origin.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    var store: LibraryStore { library.store }

    @discardableResult
    func addSource(_ name: String) throws -> Source {
        try library.addSource(name: name, feedURL: origin.url("/feeds/\(served)/\(name).json"))
    }

    /// Merges `specs` as the source's complete catalog; returns the items by content id.
    @discardableResult
    func merge(_ source: Source, _ specs: [ItemSpec]) throws -> [String: Item] {
        var entries: [CatalogEntry] = []
        var paths: [String: GeneratedBytes] = [:]
        for spec in specs {
            served += 1
            let path = "/m/\(served)"
            let generated = GeneratedBytes(size: spec.size, seed: spec.seed)
            origin.serve(path, .generated(size: spec.size, seed: spec.seed, contentType: spec.mimeType))
            paths[spec.contentID] = generated
            entries.append(CatalogEntry(
                contentID: spec.contentID, title: spec.title, type: .video, mediaURL: origin.url(path), size: spec.size,
                mimeType: spec.mimeType, publishedAt: spec.published,
                thumbnailURL: spec.thumbnail ? origin.url(path + ".jpg") : nil,
                subtitles: spec.subtitles.map { SubtitleTrack(language: $0, url: origin.url("\(path).\($0).vtt"), format: "vtt") },
                licence: spec.licence, categoryPaths: spec.categories))
        }
        _ = try store.mergeCatalog(sourceID: source.id, title: nil, entries: entries, isComplete: true, now: Date())
        var result: [String: Item] = [:]
        for spec in specs {
            let item = try #require(try store.item(source: source.name, contentID: spec.contentID))
            bytes[item.id] = paths[spec.contentID]
            result[spec.contentID] = item
        }
        return result
    }

    /// The origin's bytes of an item's media.
    func originBytes(_ item: Item) -> Data {
        bytes[item.id]!.bytes()
    }

    /// Puts the item's whole media in the cache the way the engine does (bytes on disk first,
    /// then the range map) and marks it cached.
    func cache(_ item: Item, downloadedAt: Date = Date()) throws {
        try writeCacheFile(item, file: "media", data: originBytes(item))
        try store.setState(itemID: item.id, state: .cached)
        try store.setDownloaded(itemID: item.id, at: downloadedAt)
    }

    func writeCacheFile(_ item: Item, file: String, data: Data) throws {
        let path = CacheLayout.filePath(library: library.folder, itemID: item.id, file: file)
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        try data.write(to: URL(fileURLWithPath: path))
        try store.addPresentRange(itemID: item.id, file: file, range: 0..<Int64(data.count))
    }

    /// Reopens the library (after another process changed it, or to drop this process's
    /// connections before handing the folder to another user).
    func reopen() throws {
        try? library.store.close()
        library = try Library(folder: URL(fileURLWithPath: libraryPath))
    }

    /// The path of an item file under the mount.
    func path(_ relative: String) -> String { mountpoint + "/" + relative }
}

struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
