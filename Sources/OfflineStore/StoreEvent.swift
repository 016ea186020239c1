import Foundation

/// The kind of an event-log line. Open set: the engine may add its own kinds.
public struct EventKind: RawRepresentable, Sendable, Codable, Hashable, ExpressibleByStringLiteral,
    CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }
    public var description: String { rawValue }

    /// One per source sync (the merge writes it).
    public static let sync: EventKind = "sync"
    /// An item changed state (`setState` writes it).
    public static let state: EventKind = "state"
    /// A failure worth showing (bad control line, feed error).
    public static let error: EventKind = "error"
    /// A sync skipped or changed something of its feed (one per sync, `CatalogSync`).
    public static let warning: EventKind = "warning"
    public static let source: EventKind = "source"
    public static let policy: EventKind = "policy"
    /// A sync found a new item (one per item, up to `MergeReport.discoveredLimit` per sync).
    public static let discovered: EventKind = "discovered"
    /// A downloading item's progress (`ProgressEvents`).
    public static let progress: EventKind = "progress"
    /// An item's licence expires within the hour (once per expiry).
    public static let licenceExpiring: EventKind = "licence-expiring"
}

/// One line of the append-only event log (`.events`).
public struct StoreEvent: Sendable, Codable, Hashable {
    /// Strictly increasing; readers resume with `events(after:)`.
    public var seq: Int64
    public var time: Date
    public var kind: EventKind
    /// No foreign key: events outlive the items they mention.
    public var itemID: Int64?
    public var sourceID: Int64?
    public var message: String
    /// JSON text, when the event carries structured details.
    public var details: String?

    public init(seq: Int64, time: Date, kind: EventKind, itemID: Int64?, sourceID: Int64?, message: String,
                details: String?) {
        self.seq = seq
        self.time = time
        self.kind = kind
        self.itemID = itemID
        self.sourceID = sourceID
        self.message = message
        self.details = details
    }
}
