import Foundation

/// Tuning of the scheduler. Defaults follow DESIGN §1; tests shorten nothing: they move an
/// injected clock instead.
public struct SchedulerConfiguration: Sendable {
    public var backoff = Backoff()
    /// `metadata-pending`: the first lookup, then this many retries …
    public var metadataRetries = 3
    /// … this far apart.
    public var metadataRetryDelay: TimeInterval = 10
    /// Items waiting for space are rechecked this often (space freed by other programs
    /// cannot be observed otherwise).
    public var spaceRecheckInterval: TimeInterval = 30
    /// Windows and calendar days are in this zone (the machine's by default).
    public var timeZone: TimeZone = .current
    /// Syncs subscribed sources every `sync-interval` while running.
    public var periodicSync = true
    /// Seeds the back-off jitter (nil: random).
    public var jitterSeed: UInt64?
    /// Free bytes on the library's filesystem (tests may replace statvfs).
    public var freeSpace: @Sendable (URL) -> Int64? = SpaceManager.statvfsFreeSpace
    /// Immediate resumes inside one download after a transient failure, before back-off.
    public var attemptsPerDownload = 3
    /// The `hook` command's bounds (tests shorten them).
    public var hooks = HookRunner.Settings()

    public init() {}
}

/// What a command asked of a running download; applied when its thread returns.
enum StopIntent: Sendable, Equatable {
    case pause
    case cancel
    case delete
    /// `sideFiles`: the thumbnail and subtitles go too (`evict <item> all`).
    case evict(sideFiles: Bool)
    case licenceExpired
    /// The engine is stopping: leave the item `queued` for the next one.
    case shutdown
}

/// Retry bookkeeping of one item (in memory: a restart retries at once).
struct RetryState: Sendable {
    var attempts = 0
    var next: Date = .distantPast
}
