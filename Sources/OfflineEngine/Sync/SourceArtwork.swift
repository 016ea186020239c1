public import Foundation
import OfflineHTTP
import OfflineStore

/// A feed's artwork, kept at `<library>/artwork/<source id>` by the sync that finds it: the
/// mount lists it as `sources/<source>/folder.jpg` with policy `sidecars nfo` (what Kodi,
/// Jellyfin and Emby take for a folder's picture). Fetched again only when its URL changes.
public enum SourceArtwork {
    /// Artwork larger than this is left out (a warning of the sync).
    public static let maxBytes = 8 << 20

    public static func path(library: URL, sourceID: Int64) -> String {
        library.appendingPathComponent("artwork/\(sourceID)").path
    }

    /// Brings the kept artwork in step with `url`; returns a warning when it cannot be had.
    /// Blocking (network).
    static func refresh(_ source: Source, url: String?, store: LibraryStore, client: HTTPClient,
                        policy: DestinationPolicy) -> String? {
        let path = Self.path(library: store.folder, sourceID: source.id)
        guard let url else {
            if source.imageURL != nil {
                unlink(path)
                try? store.setSourceImage(sourceID: source.id, nil)
            }
            return nil
        }
        if source.imageURL == url, FileManager.default.fileExists(atPath: path) { return nil }
        let request = HTTPRequest(url: url, headers: [("Accept", "image/*")], maxBodyBytes: Int64(maxBytes),
                                  timeouts: .document, destinationPolicy: policy)
        switch client.perform(request) {
        case .failure(let error):
            return "artwork \(url): \(error.message)"
        case .success(let response) where response.status != 200:
            return "artwork \(url): HTTP \(response.status)"
        case .success(let response):
            do {
                let folder = (path as NSString).deletingLastPathComponent
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                try response.body.write(to: URL(fileURLWithPath: path), options: .atomic)
                try store.setSourceImage(sourceID: source.id, url)
                // Also tells a mount to list it (a new event moves the store's change token).
                _ = try? store.appendEvent(kind: .source, sourceID: source.id, message: "\(source.name): artwork from \(url)")
                return nil
            } catch {
                return "artwork \(url): \(error)"
            }
        }
    }
}
