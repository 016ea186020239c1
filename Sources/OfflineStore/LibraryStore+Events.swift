import Foundation
internal import GRDB

extension LibraryStore {
    // MARK: - Event log

    /// Appends one line to the event log. `details` is JSON text.
    /// - Returns: the event's sequence number.
    @discardableResult
    public func appendEvent(kind: EventKind, itemID: Int64? = nil, sourceID: Int64? = nil, message: String,
                            details: String? = nil) throws -> Int64 {
        let now = clock()
        return try write { db in
            try insertEvent(db, kind: kind, itemID: itemID, sourceID: sourceID, message: message, details: details, at: now)
            return db.lastInsertedRowID
        }
    }

    /// Events with `seq > after`, oldest first, at most `limit`. Start with `after: 0`.
    public func events(after seq: Int64 = 0, limit: Int = 1000) throws -> [StoreEvent] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM event WHERE seq > ? ORDER BY seq LIMIT ?", arguments: [seq, max(0, limit)])
                .map(StoreEvent.init(row:))
        }
    }

    /// The newest sequence number (0 when the log is empty): where `tail -f` style readers start.
    public func lastEventSeq() throws -> Int64 {
        try read { db in try Int64.fetchOne(db, sql: "SELECT ifnull(max(seq), 0) FROM event") ?? 0 }
    }

    // MARK: - Daily usage

    /// The `dailyUsage` key of `date`: `YYYY-MM-DD` in `timeZone` (local time by default,
    /// since the daily limit follows the user's calendar day).
    public static func dayKey(for date: Date, timeZone: TimeZone = .current) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let c = calendar.dateComponents([.year, .month, .day], from: date)
        let y = c.year ?? 1970, m = c.month ?? 1, d = c.day ?? 1
        return String(format: "%04d-%02d-%02d", y, m, d)
    }

    /// Adds downloaded bytes to the total of the calendar day containing `day`.
    public func addUsage(bytes: Int64, day: Date, timeZone: TimeZone = .current) throws {
        guard bytes != 0 else { return }
        let key = Self.dayKey(for: day, timeZone: timeZone)
        try write { db in
            try db.execute(sql: """
                INSERT INTO dailyUsage (day, bytes) VALUES (?, ?) ON CONFLICT (day) DO UPDATE SET bytes = bytes + excluded.bytes
                """, arguments: [key, bytes])
        }
    }

    /// Bytes downloaded on the calendar day containing `day`.
    public func usage(day: Date, timeZone: TimeZone = .current) throws -> Int64 {
        let key = Self.dayKey(for: day, timeZone: timeZone)
        return try read { db in try Int64.fetchOne(db, sql: "SELECT bytes FROM dailyUsage WHERE day = ?", arguments: [key]) ?? 0 }
    }

    // MARK: - Policies

    /// One policy, typed: `store.policy(.cacheLimit)` is a `ByteLimit`.
    public func policy<Value>(_ key: PolicyKey<Value>) throws -> Value {
        try key.read(policies())
    }

    /// Every policy at once (one read): what a scheduler tick needs.
    public func policies() throws -> PolicySet {
        let stored = try storedPolicies()
        return PolicySet(values: stored)
    }

    /// Sets a policy from user text (`set cache-limit 10G`); `default` resets it.
    /// - Returns: the canonical value now in force.
    /// - Throws: `.unknownPolicy` (listing the known names) or `.invalidPolicyValue`
    ///   (naming the accepted forms).
    @discardableResult
    public func setPolicy(name: String, value: String) throws -> String {
        let policy = try Policy.named(name)
        let reset = value.trimmingCharacters(in: .whitespaces).lowercased() == "default"
        let canonical = reset ? policy.defaultValue : try policy.canonicalize(value)
        let now = clock()
        try write { db in
            if reset {
                try db.execute(sql: "DELETE FROM setting WHERE name = ?", arguments: [policy.name])
            } else {
                try db.execute(sql: "INSERT INTO setting (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                               arguments: [policy.name, canonical])
            }
            try insertEvent(db, kind: .policy, itemID: nil, sourceID: nil, message: "\(policy.name) = \(canonical)",
                            details: nil, at: now)
        }
        return canonical
    }

    /// Every policy, in `Policy.allCases` order, with its canonical value and whether it is
    /// the default.
    public func allPolicies() throws -> [(name: String, value: String, isDefault: Bool)] {
        let stored = try storedPolicies()
        return Policy.allCases.map { policy in
            let value = stored[policy].flatMap { try? policy.canonicalize($0) } ?? policy.defaultValue
            return (policy.name, value, value == policy.defaultValue)
        }
    }

    private func storedPolicies() throws -> [Policy: String] {
        try read { db in
            var result: [Policy: String] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT name, value FROM setting") {
                if let policy = Policy(rawValue: row[0]) { result[policy] = row[1] }
            }
            return result
        }
    }
}

/// A typed handle on one policy, for `LibraryStore.policy(_:)`.
public struct PolicyKey<Value>: Sendable {
    public let policy: Policy
    let read: @Sendable (PolicySet) -> Value
}

extension PolicyKey where Value == Int {
    public static var maxConcurrentDownloads: Self { .init(policy: .maxConcurrentDownloads) { $0.maxConcurrentDownloads } }
    public static var retryLimit: Self { .init(policy: .retryLimit) { $0.retryLimit } }
    public static var recentDays: Self { .init(policy: .recentDays) { $0.recentDays } }
}

extension PolicyKey where Value == ByteLimit {
    public static var fileSizeMax: Self { .init(policy: .fileSizeMax) { $0.fileSizeMax } }
    public static var dailyLimit: Self { .init(policy: .dailyLimit) { $0.dailyLimit } }
    public static var cacheLimit: Self { .init(policy: .cacheLimit) { $0.cacheLimit } }
}

extension PolicyKey where Value == Int64 {
    public static var freeSpaceReserve: Self { .init(policy: .freeSpaceReserve) { $0.freeSpaceReserve } }
}

extension PolicyKey where Value == Bool {
    public static var autoPurge: Self { .init(policy: .autoPurge) { $0.autoPurge } }
}

extension PolicyKey where Value == DownloadWindow {
    public static var downloadWindow: Self { .init(policy: .downloadWindow) { $0.downloadWindow } }
}

extension PolicyKey where Value == DownloadBehavior {
    public static var downloadBehavior: Self { .init(policy: .downloadBehavior) { $0.downloadBehavior } }
}

extension PolicyKey where Value == TimeInterval {
    /// Seconds.
    public static var syncInterval: Self { .init(policy: .syncInterval) { $0.syncInterval } }
}
