import Foundation
internal import GRDB

/// The library database: one SQLite file per library folder (`<library>/library.sqlite`).
///
/// Writes go through GRDB's single writer connection (serialized, one transaction each);
/// reads come from a pool of reader connections and may run on any thread at once (WAL),
/// including synchronously from FUSE threads. Every method is synchronous and blocking: call
/// it from a thread of your own, not from Swift's cooperative pool.
public final class LibraryStore: Sendable {
    /// The file name of the database inside a library folder.
    public static let databaseFileName = "library.sqlite"

    /// The library folder.
    public let folder: URL
    /// Used for `addedAt`/`updatedAt` and event times; tests inject their own.
    public let clock: @Sendable () -> Date
    let pool: DatabasePool

    private init(folder: URL, pool: DatabasePool, clock: @escaping @Sendable () -> Date) {
        self.folder = folder
        self.pool = pool
        self.clock = clock
    }

    /// Opens (creating if needed) the library in `folder` and migrates it to the current schema.
    ///
    /// Sets WAL, `synchronous=FULL` (a commit that claims bytes are present must survive a
    /// power loss), foreign keys and a busy timeout, then runs `PRAGMA quick_check`.
    /// - Throws: `StoreError` `.corruptDatabase` when the file is not a database or the check
    ///   fails; `.databaseError` when the folder or file cannot be created or opened.
    public static func open(folder: URL, clock: @escaping @Sendable () -> Date = { Date() }) throws -> LibraryStore {
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
        }
        let pool: DatabasePool
        do {
            pool = try DatabasePool(path: path, configuration: config)
            // GRDB switches the writer to synchronous=NORMAL while enabling WAL, after
            // prepareDatabase ran: restore FULL on the one connection that writes.
            try pool.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA synchronous = FULL")
                // A 100k-item merge touches tens of MB of pages in one transaction; with the
                // default 2 MB cache SQLite spills to the WAL mid-transaction.
                try db.execute(sql: "PRAGMA cache_size = -32768")
                let problems = try String.fetchAll(db, sql: "PRAGMA quick_check")
                if problems != ["ok"] {
                    throw StoreError(.corruptDatabase,
                        "library database \(path) failed its integrity check: \(problems.prefix(5).joined(separator: "; "))")
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

    /// Closes every connection. Further calls fail with `.databaseError`.
    public func close() throws {
        try wrap { try pool.close() }
    }

    /// The identifiers of the migrations applied, oldest first (for diagnostics and tests).
    public func appliedMigrations() throws -> [String] {
        try read { db in try StoreSchema.migrator.appliedIdentifiers(db).sorted() }
    }

    /// Runs `PRAGMA integrity_check` (slower than the check at open) and returns its lines
    /// (`["ok"]` when sound).
    public func integrityCheck() throws -> [String] {
        try read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
    }

    /// Copies the library database to `url` with `VACUUM INTO` (consistent while in use).
    public func backup(to url: URL) throws {
        try wrap { try pool.read { db in try db.execute(sql: "VACUUM INTO ?", arguments: [url.path]) } }
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
