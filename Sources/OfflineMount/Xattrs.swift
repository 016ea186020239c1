import Foundation
public import OfflineEngine
public import OfflineFUSE

/// The extended attributes of DESIGN §2 as name → value tables (pure functions of store
/// rows), and the writable ones as library commands. Attributes with no value (no error, never
/// downloaded, no MIME type) are left out, so reading them gives `ENODATA` like any unknown name.
public enum Xattrs {
    public static let download = "user.offline.download"
    public static let subscribed = "user.offline.subscribed"
    /// The resume point in seconds, and the watched mark: both writable (docs/playback.md).
    public static let position = "user.offline.position"
    public static let watched = "user.offline.watched"

    /// Whether `name` can be one of ours (the rest is `ENODATA` without reading the store).
    public static func isOurs(_ name: String) -> Bool {
        name.hasPrefix("user.offline.") || name.hasPrefix("user.xdg.") || name == "user.mime_type"
    }

    /// An item's media file.
    /// - Parameter isOpen: a reader has it open, which locks it as `lock` does.
    public static func item(_ item: Item, source: String, categories: [[String]], licence: Licence?,
                            isOpen: Bool = false) -> [(String, String)] {
        var list: [(String, String)] = [
            ("user.offline.state", item.state.rawValue),
            ("user.offline.progress", String(format: "%.4f", (item.progress * 10_000).rounded() / 10_000)),
            ("user.offline.bytes", String(item.bytesPresent)),
        ]
        if let size = item.size { list.append(("user.offline.size", String(size))) }
        if let error = item.error { list.append(("user.offline.error", error.rawValue)) }
        list += [
            ("user.offline.licence", licence?.terms.kind.rawValue ?? "none"),
            ("user.offline.licence.expires", LicenceClock.expiryText(licence)),
        ]
        if let play = LicenceClock.playExpiryText(licence) { list.append(("user.offline.licence.play-expires", play)) }
        list += [
            ("user.offline.content-id", item.contentID),
            ("user.offline.source", source),
            ("user.offline.categories", categories.map { $0.joined(separator: "/") }.joined(separator: ", ")),
        ]
        if let downloaded = item.downloadedAt { list.append(("user.offline.downloaded-at", downloaded.formatted(.iso8601))) }
        list.append(("user.offline.locked", item.locked || isOpen ? "1" : "0"))
        list.append((position, secondsText(item.position ?? 0)))
        list.append((watched, item.watched ? "1" : "0"))
        if let played = item.lastPlayedAt { list.append(("user.offline.last-played", played.formatted(.iso8601))) }
        list.append((download, wish(item)))
        if let url = item.mediaURL { list.append(("user.xdg.origin.url", url)) }
        if let mime = item.mimeType { list.append(("user.mime_type", mime)) }
        if let comment = item.summary, !comment.isEmpty { list.append(("user.xdg.comment", comment)) }
        return list
    }

    /// A folder: counts of the items it holds, in its sub-folders too, each once; a source
    /// folder also its toggle and feed.
    public static func folder(items: [TreeItem], source: Source?) -> [(String, String)] {
        var list: [(String, String)] = [
            ("user.offline.items", String(items.count)),
            ("user.offline.cached", String(items.filter { $0.state == .cached }.count)),
            ("user.offline.downloading", String(items.filter { $0.state == .downloading }.count)),
            ("user.offline.queued", String(items.filter { $0.state == .queued }.count)),
            ("user.offline.size", String(items.reduce(UInt64(0)) { $0 + $1.size })),
        ]
        if let source {
            list.append((subscribed, source.subscribed ? "1" : "0"))
            list.append(("user.xdg.origin.url", source.feedURL))
            if let synced = source.lastSyncAt { list.append(("user.offline.last-sync", synced.formatted(.iso8601))) }
            if let error = source.lastSyncError { list.append(("user.offline.error", error)) }
        }
        return list
    }

    /// What `user.offline.download` reads: the user's wish for the item.
    public static func wish(_ item: Item) -> String {
        switch item.state {
        case .paused: "paused"
        case .cached, .partiallyCached: "on"
        case .queued, .downloading, .idle, .metadataPending: "on"
        case .discovered, .failed, .deleted: "off"
        }
    }

    /// The commands a write of `user.offline.download` asks for, or the errno refusing it.
    /// `on`: queue or resume; `paused`: pause; `off`: cancel (dropping partial bytes) or, for
    /// an item with bytes kept, evict.
    public static func downloadToggle(_ value: [UInt8], item: Item) -> Result<[LibraryCommand], Errno> {
        let reference = String(item.id)
        switch toggleValue(value) {
        case "on":
            switch item.state {
            case .paused, .idle, .failed: return .success([.resume(item: reference)])
            case .discovered, .deleted: return .success([.download(item: reference, options: DownloadOptions())])
            default: return .success([])  // already on
            }
        case "paused":
            return .success(item.state == .paused ? [] : [.pause(item: reference)])
        case "off":
            switch item.state {
            case .cached, .partiallyCached: return .success([.evict(item: reference)])
            case .discovered: return .success(item.bytesPresent > 0 ? [.evict(item: reference)] : [])
            case .deleted: return .success([])
            default: return .success([.cancel(item: reference)])
            }
        default:
            return .failure(.invalidArgument)
        }
    }

    /// Seconds as `user.offline.position` shows them: whole, or to a tenth.
    static func secondsText(_ seconds: Double) -> String {
        let tenths = (seconds * 10).rounded() / 10
        return tenths == tenths.rounded() ? String(Int64(tenths)) : String(format: "%.1f", tenths)
    }

    /// The command a write of `user.offline.position` (seconds) or `user.offline.watched`
    /// (`1`/`0`) asks for.
    public static func playStateWrite(_ name: String, _ value: [UInt8], itemID: Int64) -> Result<[LibraryCommand], Errno> {
        let text = toggleValue(value)
        if name == position {
            guard let seconds = Double(text), seconds.isFinite, seconds >= 0 else { return .failure(.invalidArgument) }
            return .success([.setPosition(item: String(itemID), seconds: seconds)])
        }
        switch text {
        case "1": return .success([.setWatched(item: String(itemID), true)])
        case "0": return .success([.setWatched(item: String(itemID), false)])
        default: return .failure(.invalidArgument)
        }
    }

    /// The commands a write of `user.offline.subscribed` on a source folder asks for.
    public static func subscribedToggle(_ value: [UInt8], source: Source) -> Result<[LibraryCommand], Errno> {
        switch toggleValue(value) {
        case "1": return .success(source.subscribed ? [] : [.subscribe(source: source.name)])
        case "0": return .success(source.subscribed ? [.unsubscribe(source: source.name)] : [])
        default: return .failure(.invalidArgument)
        }
    }

    /// The value as text, without the trailing newline or NUL some tools add, or spaces.
    static func toggleValue(_ value: [UInt8]) -> String {
        var bytes = value[...]
        while let last = bytes.last, last == 0 || last == UInt8(ascii: "\n") || last == UInt8(ascii: " ") { bytes.removeLast() }
        while bytes.first == UInt8(ascii: " ") { bytes.removeFirst() }
        return String(decoding: bytes, as: UTF8.self)
    }
}
