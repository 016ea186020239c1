/// The `CachedFile`s a range fetcher holds, by item and file, and which of them to let go.
///
/// A file nobody reads or fetches keeps nothing the store does not also hold
/// (`CachedFile.isIdle`), yet its bookkeeping stays in memory, and kept for every file ever
/// touched it grows with the library. So at most `idleKept` idle files stay, the most recently
/// used: a program that opens the same file again soon (a player after a prober) finds its
/// state without a store read. (Descriptors are bounded on their own: `CacheDescriptors`.)
///
/// Not thread-safe: the fetcher holds it under its lock.
struct CachedFileTable {
    struct FileID: Hashable, Sendable {
        var itemID: Int64
        var key: CacheFileKey
    }

    private var entries: [FileID: (file: CachedFile, lastUse: UInt64)] = [:]
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

    /// The file, counted as used now.
    mutating func use(_ id: FileID) -> CachedFile? {
        guard let file = entries[id]?.file else { return nil }
        uses += 1
        entries[id]?.lastUse = uses
        return file
    }

    /// Forgets the file: its next use loads it from the store again.
    mutating func remove(_ id: FileID) {
        entries[id] = nil
    }

    mutating func insert(_ file: CachedFile, as id: FileID) {
        uses += 1
        entries[id] = (file, uses)
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
