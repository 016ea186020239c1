import OfflineStore

/// Resolves what the user typed for an item (DESIGN §2): an item id, `source/content-id`, or
/// a path inside the mount (`sources/<source>/<file name>`).
public enum ItemReference {
    public static func resolve(_ reference: String, in store: LibraryStore) throws -> Item {
        var trimmed = Substring(reference)
        while trimmed.hasPrefix("./") { trimmed = trimmed.dropFirst(2) }
        trimmed = trimmed.drop { $0 == "/" }
        if let id = Int64(trimmed), let item = try store.item(id: id) { return item }
        // A path in the mount, with or without the mount point (or `./`) in front: from the
        // first of the mount's top folders that leads to an item.
        let parts = trimmed.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        for start in parts.indices where topFolders.contains(parts[start]) {
            if let item = try item(atPath: parts[start...], in: store) { return item }
        }
        if let slash = trimmed.firstIndex(of: "/") {
            let source = String(trimmed[..<slash]), contentID = String(trimmed[trimmed.index(after: slash)...])
            if let item = try store.item(source: source, contentID: contentID) { return item }
        }
        throw EngineError.notFound("no item '\(reference)' (offlinefs ls lists the items; use an item id, source/content-id, or a path in the mount)")
    }

    private static let topFolders: Set<String> = ["sources", "categories", "state", "recent", "unwatched"]

    /// `path` from one of the mount's top folders: `sources/<source>/<file>`, `recent/<file>` …
    private static func item(atPath path: ArraySlice<String>, in store: LibraryStore) throws -> Item? {
        guard let top = path.first, let name = path.last else { return nil }
        let deep = path.count >= 3 && top != "unwatched", shallow = path.count == 2 && (top == "recent" || top == "unwatched")
        guard deep || shallow else { return nil }
        if let item = try store.item(fileName: name) { return item }
        // An item whose content-id lookup failed is listed by its id alone, in state/failed.
        guard top == "state", name.hasPrefix("["), name.hasSuffix("]") else { return nil }
        let contentID = String(name.dropFirst().dropLast())
        let matches = try store.sources().compactMap { try store.item(source: $0.name, contentID: contentID) }
            .filter { $0.fileName == nil }
        return matches.count == 1 ? matches[0] : nil
    }
}
