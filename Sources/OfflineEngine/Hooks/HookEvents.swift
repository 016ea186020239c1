import Foundation
import OfflineStore

/// One run of the `hook` policy's command: the event and what the environment says of it.
public struct HookRun: Sendable, Equatable {
    public enum Event: String, Sendable {
        /// A sync found new items (`OFFLINEFS_NEW_ITEMS_FILE` lists their paths).
        case sync
        case cached
        case failed
        /// The item's licence expires within the hour.
        case licenceExpiring = "licence-expiring"
        case licenceExpired = "licence-expired"
    }

    public var event: Event
    public var itemID: Int64?
    public var sourceID: Int64?
    /// The state the event moved the item to (`OFFLINEFS_STATE`; else its state at the run).
    public var state: String?
    /// Paths in the mount of a sync's new items (the first 1,000 of them).
    public var newItems: [String] = []
    /// How many new items the sync found (more than `newItems` past 1,000).
    public var newItemCount = 0
}

/// Which event-log lines run the hook (pure, tested by table): a `sync` line with the
/// `discovered` lines before it, and the `state` lines into `cached` or `failed`, and
/// `licence-expiring`.
struct HookEvents {
    /// `discovered` paths per source since that source's last `sync` line.
    private var discovered: [Int64: (paths: [String], count: Int)] = [:]

    mutating func runs(for events: [StoreEvent]) -> [HookRun] {
        var runs: [HookRun] = []
        for event in events {
            switch event.kind {
            case .discovered:
                guard let source = event.sourceID else { continue }
                if event.itemID != nil, event.message.hasPrefix("discovered ") {
                    discovered[source, default: ([], 0)].paths.append(String(event.message.dropFirst("discovered ".count)))
                    discovered[source, default: ([], 0)].count += 1
                } else if let more = Self.summaryCount(event.message) {
                    discovered[source, default: ([], 0)].count += more
                }
            case .sync:
                guard let source = event.sourceID, let found = discovered.removeValue(forKey: source), found.count > 0 else { continue }
                runs.append(HookRun(event: .sync, sourceID: source, newItems: found.paths, newItemCount: found.count))
            case .state:
                guard let itemID = event.itemID, let details = Self.fields(event.details) else { continue }
                switch details["to"] {
                case ItemState.cached.rawValue?:
                    runs.append(HookRun(event: .cached, itemID: itemID, sourceID: event.sourceID, state: details["to"]))
                case ItemState.failed.rawValue?:
                    let expired = details["error"] == ItemErrorCode.licenceExpired.rawValue
                    runs.append(HookRun(event: expired ? .licenceExpired : .failed, itemID: itemID, sourceID: event.sourceID,
                                        state: details["to"]))
                default: continue
                }
            case .licenceExpiring:
                guard let itemID = event.itemID else { continue }
                runs.append(HookRun(event: .licenceExpiring, itemID: itemID, sourceID: event.sourceID))
            default: continue
            }
        }
        return runs
    }

    /// N of `discovered N more items in …`.
    private static func summaryCount(_ message: String) -> Int? {
        guard message.hasPrefix("discovered ") else { return nil }
        return Int(message.dropFirst("discovered ".count).prefix { $0.isNumber })
    }

    private static func fields(_ details: String?) -> [String: String]? {
        guard let data = details?.data(using: .utf8) else { return nil }
        return (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?.compactMapValues { $0 as? String }
    }
}
