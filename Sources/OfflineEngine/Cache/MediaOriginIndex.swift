import CSystemShim
import Foundation
import OfflineHTTP
import OfflineStore
import Synchronization

/// Where each item's media comes from, for the items with no cached media byte, in memory: a
/// reader's first open of such an item then starts its transfer without a store read (which,
/// after an idle spell, all comes before the first byte can be asked for).
///
/// The store stays the truth:
/// - the entries come from one store read (`LibraryStore.forEachUncachedMedia`), made when the
///   engine starts, on its warm-up thread;
/// - they answer only while the catalog generation they were read at holds (`CatalogChanges`):
///   a merge that updated or removed items, or a source removed, outdates them all, and the
///   next look-up starts a new read in the background (until it lands, opens read the store);
/// - they are asked only for items with no `CachedFile`, which holds the file's state while
///   it lives; an item whose `CachedFile` the range fetcher let go is `forget`-ten here, as
///   its file may hold bytes now (the next read of the store brings it back if not).
///
/// Changes made by another process while the engine runs are not seen: the design routes them
/// through the engine (the control file).
final class MediaOriginIndex: Sendable {
    typealias Read = @Sendable (_ body: (_ itemID: Int64, _ mediaURL: String, _ feedURL: String) -> Void) throws -> Void

    /// Ids in order and their URLs end to end, each as the length it shares with the URL
    /// before and the rest: a catalog's media URLs mostly differ in their last bytes, and
    /// whole ones were most of what the index held (45 of ~60 bytes an item).
    struct Table: Sendable {
        private(set) var ids: [Int64] = []
        /// Where each item's URL ends in `text` (it starts where the previous one ends).
        private var ends: [UInt32] = []
        /// Per item: `DestinationPolicy.any` (its source's feed URL is not public), else `.publicOnly`.
        private var anyDestination: [Bool] = []
        /// Per item: how many bytes its URL shares with the one before (a byte; 0 for every
        /// `restart`-th, so a look-up rebuilds at most that many), then the rest of it.
        private(set) var text: [UInt8] = []
        private var previous: [UInt8] = []
        private static let restart = 16

        mutating func append(itemID: Int64, url: String, anyDestination any: Bool) {
            let url = Array(url.utf8)
            var shared = 0
            if !ids.count.isMultiple(of: Self.restart) {
                let limit = min(url.count, previous.count, Int(UInt8.max))
                while shared < limit, url[shared] == previous[shared] { shared += 1 }
            }
            text.append(UInt8(shared))
            text.append(contentsOf: url[shared...])
            ids.append(itemID)
            ends.append(UInt32(truncatingIfNeeded: text.count))
            anyDestination.append(any)
            previous = url
        }

        func origin(itemID: Int64) -> FetchOrigin? {
            let low = ids.partitionPoint { $0 >= itemID }
            guard low < ids.count, ids[low] == itemID else { return nil }
            var url: [UInt8] = []
            for index in (low - low % Self.restart)...low {
                let start = index == 0 ? 0 : Int(ends[index - 1])
                url.removeSubrange(Int(text[start])...)
                url.append(contentsOf: text[(start + 1)..<Int(ends[index])])
            }
            return FetchOrigin(url: String(decoding: url, as: UTF8.self), destinationPolicy: anyDestination[low] ? .any : .publicOnly)
        }
    }

    private struct State {
        /// The catalog generation `table` was read at; nil while it holds nothing usable.
        var generation: Int?
        var table = Table()
        /// Items whose media may have cached bytes since `table` was read: asked of the store.
        var forgotten: Set<Int64> = []
        /// While a read runs: the items forgotten since it started, which it may have read
        /// before their bytes came (they become `forgotten` when it lands).
        var forgottenDuringRead: Set<Int64>?
        var loading: Bool { forgottenDuringRead != nil }
        /// The catalog generation the last read started at; nil before the first read. A read
        /// that failed or was outdated is tried again only once the catalog changed since.
        var attempted: Int?
        /// `forgotten` outgrew `maxForgotten`: the next look-up reads again, the table
        /// answering meanwhile.
        var outgrown = false

        /// Nothing answers until a read lands.
        mutating func dropTable() {
            generation = nil
            table = Table()
            forgotten = []
            outgrown = false
        }
    }

    private let state = Mutex(State())  // leaf lock
    private let changes: CatalogChanges
    private let read: Read
    /// The read a look-up started, while it runs.
    private let backgroundRead = DispatchGroup()

    init(changes: CatalogChanges, read: @escaping Read) {
        self.changes = changes
        self.read = read
    }

    convenience init(store: LibraryStore) {
        self.init(changes: store.catalogChanges, read: { body in try store.forEachUncachedMedia(body) })
    }

    /// The origin of the item's media when known without a store read. Memory only (an
    /// outdated or outgrown index starts its new read on a thread of its own).
    func origin(itemID: Int64) -> FetchOrigin? {
        let now = changes.generation
        let (table, reload) = state.withLock { s -> (Table?, Bool) in
            let current = s.generation == now
            if !current { s.dropTable() }  // outdated: a media URL may have moved
            let reload = !s.loading && (current ? s.outgrown : s.attempted != now)
            if reload {
                s.forgottenDuringRead = []
                s.outgrown = false
                s.attempted = now
            }
            return (current && !s.forgotten.contains(itemID) ? s.table : nil, reload)
        }
        if reload {
            backgroundRead.enter()
            Thread { [self] in
                csystem_name_this_thread("ofs-origins")
                readTable(at: now)
                backgroundRead.leave()
            }.start()
        }
        return table?.origin(itemID: itemID)
    }

    /// Blocks until the read a look-up started in the background has landed (`load`; tests
    /// wait on it rather than on a clock).
    func waitForBackgroundRead() {
        backgroundRead.wait()
    }

    /// The item's media may have cached bytes now: its origin is no longer answered from
    /// memory (the store's record of those bytes is read instead).
    ///
    /// A mount whose catalog does not change for weeks would remember every item ever read
    /// here: past `maxForgotten` the next look-up reads the store again, and the table it
    /// replaces answers until then. A scan of the library meets that every few thousand
    /// items; dropping the table instead made the mount's memory step by its size each time.
    func forget(itemID: Int64) {
        state.withLock { s in
            s.forgottenDuringRead?.insert(itemID)
            guard s.generation != nil, s.forgotten.insert(itemID).inserted else { return }
            if s.forgotten.count > Self.maxForgotten(entries: s.table.ids.count) { s.outgrown = true }
        }
    }

    /// How many items may be forgotten before the table is read again: an eighth of its
    /// entries (a read costs about a look-up of each), at least 4,096.
    static func maxForgotten(entries: Int) -> Int { max(4096, entries / 8) }

    /// Reads the store (blocking) and keeps what it read unless the catalog changed meanwhile.
    /// If a look-up's read runs, waits for that one instead: one read at a time, so an older
    /// read cannot land after a newer one and drop its table.
    func load() {
        let generation = changes.generation
        let reading = state.withLock { s -> Bool in
            guard !s.loading else { return false }
            s.forgottenDuringRead = []
            s.attempted = generation
            s.outgrown = false
            return true
        }
        if reading { readTable(at: generation) } else { waitForBackgroundRead() }
    }

    /// The read `load` and a look-up start: its table replaces the one answering.
    private func readTable(at generation: Int) {
        var table = Table()
        var policies: [String: Bool] = [:]  // by feed URL: a handful of sources
        let read = Result {
            try self.read { itemID, url, feedURL in
                let any = policies[feedURL] ?? {
                    // As open as the source's own feed URL (`StoreCacheIndex`).
                    let any = DestinationPolicy.forFeed(host: URL(string: feedURL)?.host ?? "") == .any
                    policies[feedURL] = any
                    return any
                }()
                table.append(itemID: itemID, url: url, anyDestination: any)
            }
        }
        // Offsets are 32-bit: a catalog with over 4 GB of URLs is read from the store.
        let usable = (try? read.get()) != nil && table.text.count <= Int(UInt32.max)
        state.withLock { s in
            let forgottenDuringRead = s.forgottenDuringRead ?? []
            s.forgottenDuringRead = nil
            // A read that failed, or that the catalog outdated while it ran, answers nothing;
            // the first look-up after the catalog changes reads again (`attempted`).
            guard usable, changes.generation == generation else { return s.dropTable() }
            s.generation = generation
            s.table = table
            // What the old table outgrew (items forgotten while this read ran count too) is
            // answered now; only those forgotten meanwhile remain.
            s.forgotten = forgottenDuringRead
            s.outgrown = forgottenDuringRead.count > Self.maxForgotten(entries: table.ids.count)
        }
        // The read's rows and the table's arrays as they grew are free now; nothing as large
        // comes after (an idle mount's memory): give it back, as the tree's build does.
        _ = csystem_release_free_memory()
    }
}
