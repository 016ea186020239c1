import Foundation
internal import GRDB
internal import GRDBSQLite

/// The columns of the row a statement is on, read in place with SQLite's own calls: no `Row`
/// and no generic decoding, for queries that return every item (GRDB's generic paths spent
/// most of their time looking up type metadata there).
struct SQLiteColumns {
    private let statement: SQLiteStatement

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
