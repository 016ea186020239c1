import CSystemShim
import Dispatch
public import Foundation
public import OfflineEngine
public import Logging
import OfflineFUSE
import Synchronization

// Lock order: `building` → `current`. `current` is a leaf held only to swap or read a pointer.

/// The tree the mount serves: the current `TreeSnapshot`, rebuilt from the library when its
/// `version()` moves (checked every `refreshInterval` on a thread of its own, and at once
/// after the mount itself changed the store), so no request queries the store for a listing.
public final class MountTree: Sendable {
    private let view: LibraryView
    private let uid: UInt32, gid: UInt32
    private let folderTime: Timestamp
    private let clock: @Sendable () -> Date
    private let logger: Logger
    /// The one-file extension of a fully cached HLS item, when it can be one file.
    private let joinedExtension: @Sendable (Int64) -> String?
    private let current: Mutex<TreeSnapshot>  // protected: the snapshot requests read
    private let building = Mutex<LibraryVersion?>(nil)  // protected: one build at a time; the version it was built at
    private let stopSignal = DispatchSemaphore(value: 0)
    private let stopped = Atomic<Bool>(false)
    private let threadDone = DispatchSemaphore(value: 0)
    private let threadStarted = Atomic<Bool>(false)
    /// Closed until the first build has run: a request before then waits for the library's
    /// tree instead of seeing an empty one (and the kernel caching its misses).
    private let firstBuild = DispatchGroup()
    private let firstBuildDone = Atomic<Bool>(false)

    public init(view: LibraryView, uid: UInt32, gid: UInt32, clock: @escaping @Sendable () -> Date, logger: Logger,
                joinedExtension: @escaping @Sendable (Int64) -> String? = { _ in nil }) {
        self.view = view
        self.joinedExtension = joinedExtension
        self.uid = uid
        self.gid = gid
        self.clock = clock
        self.logger = logger
        // The library's last change, not this start: a remount moves no folder's time, so a
        // media server that rescans the folders whose time moved (Kodi) rescans none of them.
        folderTime = Timestamp((try? view.lastChange()) ?? clock())
        current = Mutex(TreeSnapshot.empty(uid: uid, gid: gid, folderTime: folderTime))
        firstBuild.enter()
    }

    /// The tree now; before the first build has run, waits for it.
    public var snapshot: TreeSnapshot {
        if !firstBuildDone.load(ordering: .acquiring) { firstBuild.wait() }
        return current.withLock { $0 }
    }

    /// The tree now, without waiting for the first build: the root is the same in the empty
    /// tree, so its attributes can be answered while the mount starts.
    public var snapshotWithoutWaiting: TreeSnapshot { current.withLock { $0 } }

    /// Until the first build is done: the tree that build will make of the library's folders
    /// and at most one item, the row `item` reads (the same `TreeBuilder`, so the same names,
    /// inodes and attributes), for the answers it gives exactly as the whole tree will
    /// (`OfflineFileSystem.earlyEntry`). Nil once built, or when the store cannot be read.
    func partial(item: (LibraryView) throws -> ItemOutline?) -> TreeSnapshot? {
        guard !isBuilt else { return nil }
        do {
            let items = try item(view).map { [$0] } ?? []
            let recentCutoff = clock().addingTimeInterval(-Double(try view.recentDays()) * 86_400)
            return TreeBuilder.build(sources: try view.sources(), categories: try view.categories(), items: items,
                                     uid: uid, gid: gid, folderTime: folderTime, recentCutoff: recentCutoff)
        } catch {
            return nil
        }
    }

    /// Whether requests go on with the tree (the first build has run, or the mount gave up).
    var isBuilt: Bool { firstBuildDone.load(ordering: .acquiring) }

    /// Runs before each build reads the library: tests hold a build with it.
    let beforeBuild = Mutex(BuildHook())

    /// A closure in a struct of its own: a closure kept bare (or optional) in a `Mutex` comes
    /// back from each `withLock { $0 }` wrapped in more reabstraction thunks (Swift 6.3), so
    /// calling it went deeper at every check, once a second, until the stack overflowed.
    struct BuildHook: Sendable {
        var run: @Sendable () -> Void = {}
    }

    /// Lets waiting requests go on with the tree as it is (the empty one when the library
    /// could not be read): for a mount that gives up while it starts.
    public func openWithoutBuilding() {
        if !firstBuildDone.exchange(true, ordering: .acquiringAndReleasing) { firstBuild.leave() }
    }

    /// Rebuilds when the library changed since the last build (always when `force`), and
    /// calls `changed` with the old and new trees when it did. Blocking (store reads): not for
    /// requests.
    /// - Returns: whether it rebuilt.
    @discardableResult
    public func refresh(force: Bool = false, changed: (_ old: TreeSnapshot, _ new: TreeSnapshot) -> Void = { _, _ in }) -> Bool {
        var trees = building.withLock { token in build(force: force, token: &token) }
        // After the first attempt requests go on, with the last good tree if it failed.
        openWithoutBuilding()
        guard trees != nil else { return false }
        if let (old, new) = trees.take() { changed(old, new) }
        // The old tree and the rows it was built from are gone now. malloc keeps what they
        // held for later allocations, and nothing as large comes until the next build: give
        // it back (about a fifth of the tree's size at 100,000 items).
        csystem_release_free_memory()
        return true
    }

    private func build(force: Bool, token: inout LibraryVersion?) -> (old: TreeSnapshot, new: TreeSnapshot)? {
        do {
            // The version is read before the rows: a change during the build moves it again,
            // so the next check rebuilds.
            beforeBuild.withLock { $0 }.run()
            let now = try view.version()
            if !force, now == token { return nil }
            let recentDays = try view.recentDays()
            var joined: [Int64: String] = [:]
            for id in try view.cachedHLSItemIDs() { joined[id] = joinedExtension(id) }
            let (sources, categories) = (try view.sources(), try view.categories())
            let recentCutoff = clock().addingTimeInterval(-Double(recentDays) * 86_400)
            let expiries = try view.licenceExpiries()
            let (sidecars, artworks) = try view.sidecarSizes(sources: sources)
            let built: TreeSnapshot
            if token == nil {
                // The first build: all rows at once, so every folder is sized exactly.
                built = TreeBuilder.build(sources: sources, categories: categories, items: try view.itemOutlines(),
                                          uid: uid, gid: gid, folderTime: folderTime, recentCutoff: recentCutoff,
                                          joinedExtensions: joined, licenceExpiries: expiries, sidecarSizes: sidecars,
                                          artworkSizes: artworks)
            } else {
                // A rebuild while the old tree is held: the rows go into the new one by one.
                let previous = current.withLock { $0 }
                built = try TreeBuilder.build(sources: sources, categories: categories,
                                              rows: { add in try view.forEachItemOutline(add) },
                                              uid: uid, gid: gid, folderTime: folderTime, recentCutoff: recentCutoff,
                                              joinedExtensions: joined, licenceExpiries: expiries,
                                              sidecarSizes: sidecars, artworkSizes: artworks,
                                              previous: previous).dated(after: previous, now: Timestamp(clock()))
            }
            token = now
            let old = current.withLock { snapshot in
                defer { snapshot = built }
                return snapshot
            }
            return (old, built)
        } catch {
            // Keep serving the last good tree; the next check tries again.
            logger.error("cannot read the library to refresh the mount's tree: \(error)")
            return nil
        }
    }

    /// Starts the thread that checks the library every `interval` and calls `changed` with the
    /// old and new trees after each rebuild.
    public func startRefreshing(every interval: Duration,
                                changed: @escaping @Sendable (TreeSnapshot, TreeSnapshot) -> Void) {
        guard !threadStarted.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let seconds = Double(interval.components.seconds) + Double(interval.components.attoseconds) / 1e18
        Thread { [self] in
            csystem_name_this_thread("ofs-tree")
            defer { threadDone.signal() }
            while !stopped.load(ordering: .acquiring) {
                if stopSignal.wait(timeout: .now() + seconds) == .success { break }
                // Reads free what they allocate, but malloc keeps the pages it got back for
                // later (it returns only the top of a heap by itself): a mount reading many
                // items held ~20 MiB more by each minute's end. A rebuild gives them back;
                // so does every check without one, so what the mount holds at any moment is
                // what it uses plus at most a check's worth of reads (docs/decisions.md).
                if !refresh(changed: changed) { csystem_release_free_memory() }
            }
        }.start()
    }

    /// Ends the refresher thread and waits for it.
    public func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        stopSignal.signal()
        if threadStarted.load(ordering: .acquiring) { threadDone.wait() }
    }
}
