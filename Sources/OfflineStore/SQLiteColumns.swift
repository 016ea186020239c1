import Foundation
internal import GRDB
internal import GRDBSQLite

/// The columns of the row a statement is on, read in place with SQLite's own calls: no `Row`
/// and no generic decoding, for queries that return every item (GRDB's generic paths spent
/// most of their time looking up type metadata there).
struct SQLiteColumns {
    private let statement: SQLiteStatement

    fileprivate init(statement: SQLiteStatement) {
        self.statement = statement
    }

    /// Runs `sql` and calls `body` once per row; `body` must not keep the columns.
    static func forEachRow(_ db: Database, sql: String, _ body: (SQLiteColumns) throws -> Void) throws {
        let statement = try db.makeStatement(sql: sql)
        let columns = SQLiteColumns(statement: statement.sqliteStatement)
        let rows = try Row.fetchCursor(statement)
        while try rows.next() != nil { try body(columns) }
    }

    func isNull(_ index: Int32) -> Bool { sqlite3_column_type(statement, index) == SQLITE_NULL }

    func int64(_ index: Int32) -> Int64 { sqlite3_column_int64(statement, index) }

    func optionalInt64(_ index: Int32) -> Int64? { isNull(index) ? nil : int64(index) }

    func bool(_ index: Int32) -> Bool { int64(index) != 0 }

    func optionalDouble(_ index: Int32) -> Double? { isNull(index) ? nil : sqlite3_column_double(statement, index) }

    /// A time column (seconds since 1970).
    func date(_ index: Int32) -> Date? {
        isNull(index) ? nil : Date(timeIntervalSince1970: sqlite3_column_double(statement, index))
    }

    /// The value whose spelling is the column's text (nil for NULL or an unknown spelling),
    /// matched on the bytes: no String per row.
    func value<Value>(_ index: Int32, spelledIn spellings: Spellings<Value>) -> Value? {
        guard let start = sqlite3_column_text(statement, index) else { return nil }
        let count = Int(sqlite3_column_bytes(statement, index))
        let text = UnsafeBufferPointer(start: start, count: count)
        return spellings.entries.first { $0.bytes.count == count && $0.bytes.elementsEqual(text) }?.value
    }

    func text(_ index: Int32) -> String? {
        guard let start = sqlite3_column_text(statement, index) else { return nil }
        let count = Int(sqlite3_column_bytes(statement, index))
        return String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
    }
}

/// The stored spellings of an enumeration (its raw values), as UTF-8 bytes.
struct Spellings<Value> {
    let entries: [(bytes: [UInt8], value: Value)]

    init(_ values: [Value], _ spelling: (Value) -> String) {
        entries = values.map { (Array(spelling($0).utf8), $0) }
    }
}

/// A value bound to a probe (`SQLiteProbe`).
enum ProbeArgument {
    case integer(Int64)
    case text(String)
}

/// A SELECT run for its first row with SQLite's own calls: no `StatementArguments`, cursor or
/// `Row`. A catalog merge probes two unique indexes per item, and GRDB's generic paths were
/// most of a probe's time. Its own prepared statement, so GRDB never sees the bindings.
struct SQLiteProbe {
    private let statement: Statement

    init(_ db: Database, sql: String) throws {
        statement = try db.makeStatement(sql: sql)
    }

    /// `body` of the first row's columns (it must not keep them), or nil when there is none.
    func firstRow<T>(_ arguments: ProbeArgument..., body: (SQLiteColumns) throws -> T) throws -> T? {
        let handle = statement.sqliteStatement
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        for (offset, argument) in arguments.enumerated() {
            let index = Int32(offset + 1)
            let code: Int32
            switch argument {
            case .integer(let value):
                code = sqlite3_bind_int64(handle, index, value)
            case .text(let value):
                var value = value
                code = value.withUTF8 { bytes in
                    // "" when empty: a nil pointer would bind NULL. SQLITE_TRANSIENT: SQLite copies.
                    let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
                    guard let start = bytes.baseAddress, !bytes.isEmpty else {
                        return sqlite3_bind_text(handle, index, "", 0, transient)
                    }
                    return sqlite3_bind_text(handle, index, UnsafeRawPointer(start).assumingMemoryBound(to: CChar.self),
                                             Int32(bytes.count), transient)
                }
            }
            guard code == SQLITE_OK else { throw error(code) }
        }
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return try body(SQLiteColumns(statement: handle))
        case SQLITE_DONE: return nil
        case let code: throw error(code)
        }
    }

    private func error(_ code: Int32) -> DatabaseError {
        let message = sqlite3_db_handle(statement.sqliteStatement).map { String(cString: sqlite3_errmsg($0)) }
        return DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: statement.sql)
    }
}
