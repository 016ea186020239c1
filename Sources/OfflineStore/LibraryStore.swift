import Foundation
internal import GRDB
internal import GRDBSQLite
import Synchronization

/// The library database: one SQLite file per library folder (`<library>/library.sqlite`).
///
/// Writes go through GRDB's single writer connection (serialized, one transaction each);
/// reads come from a pool of reader connections and may run on any thread at once (WAL),
/// including synchronously from FUSE threads. Every method is synchronous and blocking: call
/// it from a thread of your own, not from Swift's cooperative pool.
public final class LibraryStore: Sendable {
    /// The file name of the database inside a library folder.
    public static let databaseFileName = "library.sqlite"
    /// Each reader connection's page cache (`open`): 64 pages, the inner pages of the indexes
    /// one query walks.
    static let readerCacheKiB = 256

    /// The library folder.
    public let folder: URL
    /// Used for `addedAt`/`updatedAt` and event times; tests inject their own.
    public let clock: @Sendable () -> Date
    let pool: DatabasePool
    /// This process's changes of where items' bytes come from (`CatalogChanges`).
    public let catalogChanges = CatalogChanges()
    /// How many `withMergeCache` bodies run now.
    private let mergesRunning = Mutex(0)

    private init(folder: URL, pool: DatabasePool, clock: @escaping @Sendable () -> Date) {
        self.folder = folder
        self.pool = pool
        self.clock = clock
    }

    /// Opens (creating if needed) the library in `folder` and migrates it to the current schema.
    ///
    /// Sets WAL, `synchronous=FULL` (a commit that claims bytes are present must survive a
    /// power loss), foreign keys and a busy timeout, then runs `PRAGMA quick_check`.
    /// - Parameter integrityCheck: `.later` leaves the check to the caller's
    ///   `checkIntegrity()` (the mount runs it after mounting, before it serves the library);
    ///   a file that needs a migration is checked now anyway, since migrating writes.
    /// - Throws: `StoreError` `.corruptDatabase` when the file is not a database or the check
    ///   fails; `.databaseError` when the folder or file cannot be created or opened.
    public static func open(folder: URL, integrityCheck: IntegrityCheckTiming = .atOpen,
                            clock: @escaping @Sendable () -> Date = { Date() }) throws -> LibraryStore {
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw StoreError(.databaseError, "cannot create library folder \(folder.path)", underlying: error)
        }
        let path = folder.appendingPathComponent(databaseFileName).path
        var config = Configuration()
        config.foreignKeysEnabled = true
        config.busyMode = .timeout(10)
        config.label = "offlinefs.store"
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            // A reader's page cache is emptied whenever another connection has committed
            // (WAL), which a mount that downloads does several times a second: SQLite's 2 MiB
            // per reader held little but pages read since the last commit, and moved the
            // mount's memory by megabytes as five readers filled and emptied theirs. The file's
            // pages stay in the system's page cache either way.
            if db.configuration.readonly { try db.execute(sql: "PRAGMA cache_size = -\(Self.readerCacheKiB)") }
        }
        let pool: DatabasePool
        do {
            pool = try DatabasePool(path: path, configuration: config)
            // GRDB switches the writer to synchronous=NORMAL while enabling WAL, after
            // prepareDatabase ran: restore FULL on the one connection that writes.
            try pool.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA synchronous = FULL")
                if try integrityCheck == .atOpen || !StoreSchema.migrator.hasCompletedMigrations(db) {
                    try checkIntegrity(db, path: path)
                }
            }
            try StoreSchema.migrator.migrate(pool)
        } catch let error as StoreError {
            throw error
        } catch let error as DatabaseError where [.SQLITE_NOTADB, .SQLITE_CORRUPT].contains(error.resultCode) {
            throw StoreError(.corruptDatabase, "\(path) is not a readable library database", underlying: error)
        } catch {
            throw StoreError(.databaseError, "cannot open library database \(path)", underlying: error)
        }
        return LibraryStore(folder: folder, pool: pool, clock: clock)
    }

    /// Runs `body` (a catalog sync) with the writer's page cache at 32 MiB instead of
    /// SQLite's 2 MiB: a merge page touches megabytes of index pages, which a small cache
    /// re-reads for every page. Only for the merge: a mount's own commits touch a few pages
    /// each, and a cache kept full for weeks is memory the mount never gives back.
    public func withMergeCache<Value, Failure: Error>(_ body: () throws(Failure) -> Value) throws(Failure) -> Value {
        func setCacheKiB(_ kib: Int) {
            // Only speed depends on it: a failure leaves the cache as it was.
            try? pool.writeWithoutTransaction { try $0.execute(sql: "PRAGMA cache_size = -\(kib)") }
        }
        if mergesRunning.withLock({ count in count += 1; return count == 1 }) { setCacheKiB(32_768) }
        defer { if mergesRunning.withLock({ count in count -= 1; return count == 0 }) { setCacheKiB(2_000) } }
        return try body()
    }

    /// When `open` runs its integrity check.
    public enum IntegrityCheckTiming: Sendable {
        case atOpen
        /// The caller runs `checkIntegrity()` before it trusts or writes the library.
        case later
    }

    /// The check `open(folder:integrityCheck: .later)` left out, on the writer connection.
    /// - Throws: `StoreError` `.corruptDatabase` when it fails.
    public func checkIntegrity() throws {
        let path = folder.appendingPathComponent(Self.databaseFileName).path
        do {
            try pool.writeWithoutTransaction { db in
                try Self.checkIntegrity(db, path: path)
            }
        } catch let error as StoreError {
            throw error
        } catch let error as DatabaseError where [.SQLITE_NOTADB, .SQLITE_CORRUPT].contains(error.resultCode) {
            throw StoreError(.corruptDatabase, "\(path) is not a readable library database", underlying: error)
        } catch {
            throw StoreError(.databaseError, "cannot check library database \(path)", underlying: error)
        }
    }

    /// `PRAGMA quick_check` of the whole file: every page, b-tree and NOT NULL column, but not
    /// the schema's CHECK constraints (its enumerations). Writes enforce those; evaluating them
    /// again for every row was nine tenths of the check (0.25 s of 0.28 s at 100,000 items).
    private static func checkIntegrity(_ db: Database, path: String) throws {
        readAhead(db)
        try db.execute(sql: "PRAGMA ignore_check_constraints = ON")
        let problems = Result { try String.fetchAll(db, sql: "PRAGMA quick_check") }
        // Writes on this connection must be checked again: failing to restore fails the open.
        try db.execute(sql: "PRAGMA ignore_check_constraints = OFF")
        let lines = try problems.get()
        if lines != ["ok"] {
            throw StoreError(.corruptDatabase,
                "library database \(path) failed its integrity check: \(lines.prefix(5).joined(separator: "; "))")
        }
    }

    /// Reads the file once from start to end so the check finds it in the page cache: the
    /// check visits pages in b-tree order, one small read each, which on a file not in the
    /// page cache (after a boot) took 1.7 s at 100,000 items against 0.02 s for this pass.
    ///
    /// Through the connection's own file handle, not a descriptor of our own: closing any
    /// descriptor of the file drops every POSIX lock this process holds on it, SQLite's too
    /// (a daemonized mount's database then read as malformed).
    private static func readAhead(_ db: Database) {
        guard let connection = db.sqliteConnection else { return }
        var file: UnsafeMutablePointer<sqlite3_file>?
        guard withUnsafeMutablePointer(to: &file, {
                  sqlite3_file_control(connection, "main", SQLITE_FCNTL_FILE_POINTER, $0)
              }) == SQLITE_OK,
              let file, let methods = file.pointee.pMethods,
              let read = methods.pointee.xRead, let fileSize = methods.pointee.xFileSize else { return }
        var size: sqlite3_int64 = 0
        guard fileSize(file, &size) == SQLITE_OK else { return }
        let chunk = 1 << 20
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: chunk, alignment: 16)
        defer { buffer.deallocate() }
        var offset: sqlite3_int64 = 0
        while offset < size {
            let count = min(sqlite3_int64(chunk), size - offset)
            guard read(file, buffer, Int32(count), offset) == SQLITE_OK else { return }
            offset += count
        }
    }

    /// Closes every connection. Further calls fail with `.databaseError`.
    public func close() throws {
        try wrap { try pool.close() }
    }

    /// The identifiers of the migrations applied, oldest first (for diagnostics and tests).
    public func appliedMigrations() throws -> [String] {
        try read { db in try StoreSchema.migrator.appliedIdentifiers(db).sorted {
            // In the order they run: v2 before v10.
            ($0.count, $0) < ($1.count, $1)
        } }
    }

    /// Runs `PRAGMA integrity_check` (slower than the check at open) and returns its lines
    /// (`["ok"]` when sound).
    public func integrityCheck() throws -> [String] {
        try read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
    }

    /// Copies the library database to `url` with `VACUUM INTO` (consistent while in use).
    public func backup(to url: URL) throws {
        // Outside a transaction (SQLite refuses VACUUM inside one); it reads a snapshot itself.
        try wrap { try pool.writeWithoutTransaction { db in try db.execute(sql: "VACUUM INTO ?", arguments: [url.path]) } }
    }

    /// The value of a PRAGMA on the writer connection (diagnostics and tests: the durability
    /// settings are per connection, and the writer is the one that matters).
    func writerPragma(_ name: String) throws -> String? {
        precondition(name.allSatisfy { $0.isLetter || $0 == "_" }, "pragma names are identifiers")
        return try wrap { try pool.writeWithoutTransaction { db in try String.fetchOne(db, sql: "PRAGMA \(name)") } }
    }

    // MARK: - Access helpers

    /// One write transaction; errors other than `StoreError` become `.databaseError`.
    func write<T>(_ body: (Database) throws -> T) throws -> T {
        try wrap { try pool.write(body) }
    }

    func read<T>(_ body: (Database) throws -> T) throws -> T {
        try wrap { try pool.read(body) }
    }

    /// A read of one statement, which is a consistent snapshot by itself, without `read`'s
    /// transaction: for the hottest look-ups, where its extra statements show.
    func readStatement<T>(_ body: (Database) throws -> T) throws -> T {
        try wrap { try pool.unsafeRead(body) }
    }

    private func wrap<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(.databaseError, "library database error", underlying: error)
        }
    }

    /// Appends one event inside the caller's transaction.
    func insertEvent(_ db: Database, kind: EventKind, itemID: Int64?, sourceID: Int64?, message: String,
                     details: String?, at time: Date) throws {
        try db.cachedStatement(sql: """
            INSERT INTO event (time, kind, itemID, sourceID, message, details) VALUES (?, ?, ?, ?, ?, ?)
            """).execute(arguments: [time.dbTime, kind.rawValue, itemID, sourceID, message, details])
    }
}

extension Date {
    /// Stored form: seconds since 1970.
    var dbTime: Double { timeIntervalSince1970 }

    init?(dbTime: Double?) {
        guard let dbTime else { return nil }
        self.init(timeIntervalSince1970: dbTime)
    }

    /// The value as it reads back from the database (for change detection).
    var roundTripped: Date { Date(timeIntervalSince1970: timeIntervalSince1970) }
}

/// Encodes small values as JSON text for `details` and `subtitles` columns.
enum JSONText {
    static func encode(_ value: some Encodable) -> String? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    static func decode<T: Decodable>(_ type: T.Type, from text: String?) -> T? {
        guard let text, let data = text.data(using: .utf8) else { return nil }
        return try? JSONDecoder().decode(type, from: data)
    }
}

extension LibraryStore {
    /// Whether `error` is the database's disk being full (SQLite's `SQLITE_FULL`), raw or
    /// wrapped in a `StoreError`: what a front end answers `ENOSPC` for.
    public static func isDiskFull(_ error: any Error) -> Bool {
        let cause = (error as? StoreError)?.underlying ?? error
        return (cause as? DatabaseError)?.resultCode == .SQLITE_FULL
    }
}
