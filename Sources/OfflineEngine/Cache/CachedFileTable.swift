/// The `CachedFile`s a range fetcher holds, by item and file, and which of them to let go.
///
/// A file nobody reads or fetches keeps nothing the store does not also hold
/// (`CachedFile.isIdle`), yet its bookkeeping stays in memory, and kept for every file ever
/// touched it grows with the library. So at most `idleKept` idle files stay, the most recently
/// used: a program that opens the same file again soon (a player after a prober) finds its
/// state without a store read. (Descriptors are bounded on their own: `CacheDescriptors`.)
///
/// Each file remembers the catalog generation it was loaded at (`CatalogChanges`): once a
/// merge may have moved its URL, an idle file is loaded again at its next use, so a resumed
/// download asks the catalog's URL, not the one it first started from (its bytes stay; the
/// validator's `If-Range` decides whether they still belong).
///
/// Not thread-safe: the fetcher holds it under its lock.
struct CachedFileTable {
    struct FileID: Hashable, Sendable {
        var itemID: Int64
        var key: CacheFileKey
    }

    private var entries: [FileID: (file: CachedFile, lastUse: UInt64, generation: Int)] = [:]
    private var uses: UInt64 = 0
    /// Idle files beyond this many are dropped.
    let idleKept: Int
    /// The table is looked over for idle files when it grows to this many (`idleKept` more
    /// than it held after the last look, at least `2 × idleKept`): a look costs one pass over
    /// the table, so it comes once per `idleKept` new files at most.
    private var sweepAt: Int

    init(idleKept: Int) {
        self.idleKept = idleKept
        sweepAt = max(2 * idleKept, 2)
    }

    var all: [CachedFile] { entries.values.map(\.file) }

    func files(of itemID: Int64) -> [CachedFile] {
        entries.filter { $0.key.itemID == itemID }.map(\.value.file)
    }

    /// The file, without counting a use.
    func peek(_ id: FileID) -> CachedFile? {
        entries[id]?.file
    }

    /// The file, counted as used now; nil when there is none, or when it was loaded before
    /// the catalog's `generation` and nobody reads or fetches it (it goes: load it again).
    mutating func use(_ id: FileID, generation: Int, isPinned: (Int64) -> Bool) -> CachedFile? {
        guard let entry = entries[id] else { return nil }
        if entry.generation != generation && entry.file.isIdle && !isPinned(id.itemID) {
            entries[id] = nil
            return nil
        }
        uses += 1
        entries[id]?.lastUse = uses
        return entry.file
    }

    /// Forgets the file: its next use loads it from the store again.
    mutating func remove(_ id: FileID) {
        entries[id] = nil
    }

    mutating func insert(_ file: CachedFile, as id: FileID, generation: Int) {
        uses += 1
        entries[id] = (file, uses, generation)
    }

    /// Drops the idle files past the `idleKept` most recently used, once the table has grown
    /// enough to be worth a look; `isPinned` keeps the files of items a reader has open.
    /// - Returns: the files dropped (their descriptors close when the last reference goes).
    mutating func dropIdleFiles(isPinned: (Int64) -> Bool) -> [CachedFile] {
        guard entries.count >= sweepAt else { return [] }
        let idle = entries.filter { !isPinned($0.key.itemID) && $0.value.file.isIdle }
            .sorted { $0.value.lastUse > $1.value.lastUse }
        var dropped: [CachedFile] = []
        for (id, entry) in idle.dropFirst(idleKept) {
            entries[id] = nil
            dropped.append(entry.file)
        }
        sweepAt = max(2 * idleKept, entries.count + idleKept)
        return dropped
    }
}
