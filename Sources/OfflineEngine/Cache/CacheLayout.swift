public import Foundation

/// Where cached bytes live in a library folder: `<library>/cache/<item id>/<file key>`,
/// one sparse file per item file.
public enum CacheLayout {
    /// A thumbnail or subtitle file, beside the media (`media`, or an HLS item's `hls.<n>`).
    static func isSideFile(_ file: CacheFileKey) -> Bool {
        file == "thumbnail" || file.hasPrefix("subtitle.")
    }

    public static func cacheFolder(library: URL) -> URL {
        library.appendingPathComponent("cache", isDirectory: true)
    }

    /// Removes the cache folders of items the store no longer has (a removed source, items a
    /// feed dropped): ids are never used again, so nothing else can need them.
    static func removeFolders(library: URL, itemIDs: some Sequence<Int64>) {
        let cache = cacheFolder(library: library)
        for id in itemIDs { try? FileManager.default.removeItem(at: cache.appendingPathComponent(String(id))) }
    }

    public static func filePath(library: URL, itemID: Int64, file: CacheFileKey) -> String {
        filePath(cacheFolder: cacheFolder(library: library), itemID: itemID, file: file)
    }

    static func filePath(cacheFolder: URL, itemID: Int64, file: CacheFileKey) -> String {
        filePath(cacheFolderPath: cacheFolder.path, itemID: itemID, file: file)
    }

    /// Joined as text: `URL.appendingPathComponent` looks at the disk to tell a folder from a
    /// file, and this runs on every open.
    static func filePath(cacheFolderPath: String, itemID: Int64, file: CacheFileKey) -> String {
        "\(cacheFolderPath)/\(itemID)/\(file)"
    }
}
