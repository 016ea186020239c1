import Foundation
@testable import OfflineStore

/// A library in a fresh temporary folder, removed when the test ends.
func withLibrary(clock: @escaping @Sendable () -> Date = { TestClock.start },
                 _ body: (LibraryStore, URL) throws -> Void) throws {
    let folder = FileManager.default.temporaryDirectory
        .appendingPathComponent("offlinefs-store-tests-\(UUID().uuidString)", isDirectory: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let store = try LibraryStore.open(folder: folder, clock: clock)
    defer { try? store.close() }
    try body(store, folder)
}

enum TestClock {
    /// 2025-03-01 12:00:00 UTC: whole seconds so stored times compare exactly.
    static let start = Date(timeIntervalSince1970: 1_740_830_400)
}

/// A catalog entry with sensible defaults.
func entry(_ id: String, title: String? = nil, type: ItemType = .video, mime: String? = "video/mp4",
           size: Int64? = 1000, categories: [[String]] = [], licence: LicenceTerms? = nil,
           published: Date? = nil) -> CatalogEntry {
    CatalogEntry(contentID: id, title: title ?? "Title \(id)", type: type, mediaURL: "https://example.com/media/\(id).mp4",
                 size: size, mimeType: mime, duration: 60, publishedAt: published, summary: "About \(id)",
                 thumbnailURL: "https://example.com/thumb/\(id).jpg", licence: licence, categoryPaths: categories)
}
