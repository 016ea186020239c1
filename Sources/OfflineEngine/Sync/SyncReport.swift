import OfflineStore

/// What one source's sync did, for the CLI and the event log.
public struct SyncReport: Sendable {
    public enum Outcome: Sendable {
        /// The feed was fetched, parsed and merged.
        case merged(MergeReport)
        /// The origin answered 304 Not Modified: nothing changed, nothing was parsed.
        case notModified
        /// The sync failed; the message is also stored as the source's sync error.
        case failed(String)
    }

    public var sourceName: String
    public var outcome: Outcome
    /// Items or fields the parser skipped, e.g. an `ftp://` enclosure.
    public var warnings: [String]
    public var pagesFetched: Int
    public var sizesProbed: Int
    /// What a failed sync's pages committed before it failed (their new items are listed;
    /// nothing was removed).
    public var partialMerge: MergeReport? = nil

    /// What the sync merged into the store: all of it, or the pages before a failure.
    public var merged: MergeReport? {
        if case .merged(let merge) = outcome { return merge }
        return partialMerge
    }

    public var succeeded: Bool {
        if case .failed = outcome { return false }
        return true
    }

    /// One line a person reads: "acme: 12 added, 3 updated, 40 unchanged".
    public var summary: String {
        switch outcome {
        case .merged(let merge):
            var parts = ["\(merge.added) added", "\(merge.updated) updated", "\(merge.unchanged) unchanged"]
            if merge.removed > 0 { parts.append("\(merge.removed) removed") }
            if merge.keptDownloaded > 0 { parts.append("\(merge.keptDownloaded) kept (downloaded, gone from feed)") }
            if !warnings.isEmpty { parts.append("\(warnings.count) warning\(warnings.count == 1 ? "" : "s")") }
            return "\(sourceName): " + parts.joined(separator: ", ")
        case .notModified:
            return "\(sourceName): not modified"
        case .failed(let message):
            return "\(sourceName): sync failed: \(message)"
        }
    }
}
