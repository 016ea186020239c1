import Synchronization
import OfflineFUSE

/// Attribute tables built moments ago. Samba reads every attribute of every entry it lists,
/// one call each after a `listxattr` (so does `getfattr -d`), and each table costs a few
/// store reads: a 3,000-item folder took Samba 20 s to list, past its clients' timeout. A
/// table is kept `lifetime` at most, and all go at a command or a new tree (an item's at
/// its opens and closes: an open item is locked).
final class XattrTables: Sendable {
    static let lifetime: Duration = .milliseconds(250)
    /// Past this many tables (a listing of a large folder), they are dropped at the next build.
    static let capacity = 1024
    private let tables = Mutex<[UInt64: (built: ContinuousClock.Instant, table: [(String, String)])]>([:])  // leaf lock

    /// `inode`'s table from the last `lifetime`, else `build`'s.
    func table(_ inode: UInt64, build: () -> Result<[(String, String)], Errno>) -> Result<[(String, String)], Errno> {
        let now = ContinuousClock.now
        if let kept = tables.withLock({ $0[inode] }), now - kept.built < Self.lifetime { return .success(kept.table) }
        let built = build()
        if case .success(let table) = built {
            tables.withLock { tables in
                if tables.count >= Self.capacity { tables.removeAll(keepingCapacity: true) }
                tables[inode] = (now, table)
            }
        }
        return built
    }

    func remove(_ inode: UInt64) {
        _ = tables.withLock { $0.removeValue(forKey: inode) }
    }

    func removeAll() {
        tables.withLock { $0.removeAll() }
    }
}
