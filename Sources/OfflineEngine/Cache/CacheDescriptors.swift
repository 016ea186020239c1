import Glibc
import Synchronization

/// The open descriptors of one engine's cache files, at most `capacity` of them kept open
/// between uses (least recently used closed first), so the count stays bounded however many
/// files a mount has touched: a mount that kept each file's descriptors ran out after ~600
/// items under the usual `ulimit -n 1024`.
///
/// A descriptor is borrowed for each use (`withDescriptor`) and never closed while borrowed:
/// another thread's `pwrite` must not land in a file a reused number now names. Borrowed ones
/// may exceed the capacity briefly; each thread borrows at most one at a time. When the process
/// runs out of descriptors, the pool gives back those it keeps idle before it gives up.
final class CacheDescriptors: Sendable {
    /// A file and how it is opened (`O_DIRECT` or not): each is a descriptor of its own.
    struct Key: Hashable, Sendable {
        var file: ObjectIdentifier
        var direct: Bool
    }

    private struct Entry {
        var fd: Int32
        var borrowers = 0
        var lastUse: UInt64
    }

    private struct State {
        var entries: [Key: Entry] = [:]
        /// Descriptors of a file reopened while borrowed, by descriptor: closed when the last
        /// borrower gives them back.
        var retired: [Int32: Int] = [:]
        var uses: UInt64 = 0
    }

    private let state = Mutex(State())  // leaf lock; no system call under it
    let capacity: Int

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// `wanted`, or less under a low open-file limit: at most an eighth of it (the mount's own
    /// descriptors, libcurl's connections and the files programs hold open need the rest).
    static func capacity(fitting wanted: Int) -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else { return wanted }
        return max(1, min(wanted, Int(clamping: limit.rlim_cur / 8)))
    }

    /// Descriptors open now, borrowed or not (tests).
    var openCount: Int { state.withLock { $0.entries.count } }

    /// Runs `body` with the descriptor of `key`, opened with `open` if it is not open.
    func withDescriptor<Result>(_ key: Key, open: () throws(CacheFileError) -> Int32,
                                _ body: (Int32) throws(CacheFileError) -> Result) throws(CacheFileError) -> Result {
        let fd = try borrow(key, open: open)
        defer { giveBack(key, fd) }
        return try body(fd)
    }

    /// Closes the file's descriptors (its `CacheFile` is going: nobody borrows them).
    func forget(_ file: ObjectIdentifier) {
        let closing = state.withLock { s in
            [true, false].compactMap { s.entries.removeValue(forKey: Key(file: file, direct: $0))?.fd }
        }
        for fd in closing { close(fd) }
    }

    /// The file was replaced at its path (`CacheFile.removeBytes`): its next use opens the
    /// path anew. Descriptors not borrowed close now, the others when given back.
    func reopen(_ file: ObjectIdentifier) {
        let closing = state.withLock { s -> [Int32] in
            var closing: [Int32] = []
            for direct in [true, false] {
                guard let entry = s.entries.removeValue(forKey: Key(file: file, direct: direct)) else { continue }
                if entry.borrowers == 0 { closing.append(entry.fd) } else { s.retired[entry.fd] = entry.borrowers }
            }
            return closing
        }
        for fd in closing { close(fd) }
    }

    /// The descriptor of `key`, opened with `open` if it is not open, not closed until given
    /// back (`giveBack`): for a use that outlives one call (a reply spliced later).
    func borrow(_ key: Key, open: () throws(CacheFileError) -> Int32) throws(CacheFileError) -> Int32 {
        if let fd = state.withLock({ s -> Int32? in
            guard s.entries[key] != nil else { return nil }
            s.uses += 1
            s.entries[key]!.borrowers += 1
            s.entries[key]!.lastUse = s.uses
            return s.entries[key]!.fd
        }) {
            return fd
        }
        let opened: Int32
        do {
            opened = try open()
        } catch where error.isOutOfDescriptors {
            // Ours kept idle may be what is missing: give them back and try once more.
            let idle = state.withLock { s in Self.closeIdle(&s, over: 0) }
            for fd in idle { close(fd) }
            opened = try open()
        }
        var closing: [Int32] = []
        let fd = state.withLock { s -> Int32 in
            s.uses += 1
            if s.entries[key] != nil {
                // Another thread opened it meanwhile: one descriptor is enough.
                closing.append(opened)
                s.entries[key]!.borrowers += 1
                s.entries[key]!.lastUse = s.uses
                return s.entries[key]!.fd
            }
            s.entries[key] = Entry(fd: opened, borrowers: 1, lastUse: s.uses)
            closing += Self.closeIdle(&s, over: capacity)
            return opened
        }
        for fd in closing { close(fd) }
        return fd
    }

    func giveBack(_ key: Key, _ fd: Int32) {
        let closing = state.withLock { s -> [Int32] in
            if let borrowers = s.retired[fd] {
                s.retired[fd] = borrowers > 1 ? borrowers - 1 : nil
                return borrowers > 1 ? [] : [fd]
            }
            s.entries[key]?.borrowers -= 1
            return Self.closeIdle(&s, over: capacity)
        }
        for fd in closing { close(fd) }
    }

    /// Takes the least recently used descriptors nobody borrows out of the table until at most
    /// `capacity` are open (or none is left to take); the caller closes them.
    private static func closeIdle(_ s: inout State, over capacity: Int) -> [Int32] {
        var closing: [Int32] = []
        while s.entries.count > capacity {
            guard let oldest = s.entries.lazy.filter({ $0.value.borrowers == 0 }).min(by: { $0.value.lastUse < $1.value.lastUse })
            else { break }
            s.entries[oldest.key] = nil
            closing.append(oldest.value.fd)
        }
        return closing
    }
}
