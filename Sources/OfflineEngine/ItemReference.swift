import OfflineStore

/// Resolves what the user typed for an item (DESIGN §2): an item id, `source/content-id`, or
/// a path inside the mount (`sources/<source>/<file name>`).
public enum ItemReference {
    public static func resolve(_ reference: String, in store: LibraryStore) throws -> Item {
        let trimmed = reference.hasPrefix("/") ? String(reference.drop { $0 == "/" }) : reference
        if let id = Int64(trimmed), let item = try store.item(id: id) { return item }
        let parts = trimmed.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        if parts.count >= 3, parts[0] == "sources" || parts[0] == "categories" || parts[0] == "state" || parts[0] == "recent",
           let item = try store.item(fileName: parts[parts.count - 1]) {
            return item
        }
        if parts.count == 2, let item = try store.item(fileName: parts[1]), parts[0] == "recent" || parts[0] == "unwatched" {
            return item
        }
        if let slash = trimmed.firstIndex(of: "/") {
            let source = String(trimmed[..<slash]), contentID = String(trimmed[trimmed.index(after: slash)...])
            if let item = try store.item(source: source, contentID: contentID) { return item }
        }
        throw EngineError.notFound("no item '\(reference)' (offlinefs ls lists the items; use an item id, source/content-id, or a path in the mount)")
    }
}
