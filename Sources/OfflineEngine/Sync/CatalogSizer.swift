import OfflineStore

/// Gives a sync's catalog entries their sizes, of the media and of the side files (thumbnail,
/// subtitles): the feed's, else the one a previous sync found, else a HEAD request's. Called
/// once a page; what it learns (sizes the store knew, side files it probed) serves every page.
struct CatalogSizer {
    let store: LibraryStore
    let source: Source
    let probe: SizeProbe
    /// Read from the store the first time a page lacks a size; a catalog that gives every
    /// size never loads them.
    private var known: (sizes: [String: Int64], sideFileSizes: [String: Int64])?
    /// Side files probed this sync, whatever the answer: one HEAD per URL, however many items
    /// share it (a podcast's artwork).
    private var probedSideFiles = Set<String>()

    init(store: LibraryStore, source: Source, probe: SizeProbe) {
        self.store = store
        self.source = source
        self.probe = probe
    }

    /// Fills in the sizes `entries` lack; returns how many URLs it probed.
    mutating func size(_ entries: inout [CatalogEntry]) throws -> Int {
        let unsized = entries.indices.filter { entries[$0].size == nil }
        let sideFilesUnsized = entries.contains { !$0.sideFilesSized }
        guard !unsized.isEmpty || sideFilesUnsized else { return 0 }
        var known = try self.known ?? loadKnown()
        var toProbe: [Int] = []
        for index in unsized {
            if let size = known.sizes[entries[index].contentID] {
                entries[index].size = size
            } else if entries[index].type != .hls {
                toProbe.append(index)  // a playlist's size is not its media's
            }
        }
        var sideFileURLs: [String] = []
        for entry in entries {
            let urls = [entry.thumbnailSize == nil ? entry.thumbnailURL : nil] + entry.subtitles.map { $0.size == nil ? $0.url : nil }
            for case let url? in urls where known.sideFileSizes[url] == nil && probedSideFiles.insert(url).inserted {
                sideFileURLs.append(url)
            }
        }
        for (index, size) in zip(toProbe, probe.sizes(of: toProbe.map { entries[$0].mediaURL })) { entries[index].size = size }
        for (url, size) in zip(sideFileURLs, probe.sideFileSizes(of: sideFileURLs)) { known.sideFileSizes[url] = size }
        for index in entries.indices {
            if let url = entries[index].thumbnailURL, entries[index].thumbnailSize == nil {
                entries[index].thumbnailSize = known.sideFileSizes[url]
            }
            for track in entries[index].subtitles.indices where entries[index].subtitles[track].size == nil {
                entries[index].subtitles[track].size = known.sideFileSizes[entries[index].subtitles[track].url]
            }
        }
        self.known = known
        return toProbe.count + sideFileURLs.count
    }

    private func loadKnown() throws -> (sizes: [String: Int64], sideFileSizes: [String: Int64]) {
        var sizes: [String: Int64] = [:]
        var sideFileSizes: [String: Int64] = [:]  // by URL
        for listing in try store.items(matching: ItemFilter(source: source.name, includeDeleted: true)) {
            let item = listing.item
            if let size = item.size { sizes[item.contentID] = size }
            if let url = item.thumbnailURL, let size = item.thumbnailSize { sideFileSizes[url] = size }
            for track in item.subtitles { if let size = track.size { sideFileSizes[track.url] = size } }
        }
        return (sizes, sideFileSizes)
    }
}
