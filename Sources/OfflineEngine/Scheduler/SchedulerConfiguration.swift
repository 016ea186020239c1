public import Foundation

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
    /// The fastest a player is taken to play (`PlayTracker`): 1, real time, unless the user
    /// plays faster (`-o playback-speed=2`).
    public var playbackSpeed: Double = 1
    /// Seeds the back-off jitter (nil: random).
    public var jitterSeed: UInt64?
    /// Free bytes on the library's filesystem (tests may replace statvfs).
    public var freeSpace: @Sendable (URL) -> Int64? = SpaceManager.statvfsFreeSpace
    /// Items one check of the cache's limits evicts at most (`SpaceManager.keepWithinLimits`):
    /// the scheduler's thread does other work between checks.
    public var evictionsPerCheck = 1_024
    /// Immediate resumes inside one download after a transient failure, before back-off.
    public var attemptsPerDownload = 3
    /// How long a command that stops a running download (pause, cancel) waits for it to
    /// stop and its new state to be written, before it returns anyway.
    public var commandStopWait: TimeInterval = 5
    /// The `hook` command's bounds (tests shorten them).
    public var hooks = HookRunner.Settings()
    /// The bus NetworkManager's metered flag is read on (nil: the system bus, as
    /// `sd_bus_open_system(3)` finds it: `$DBUS_SYSTEM_BUS_ADDRESS`, else
    /// `/run/dbus/system_bus_socket`).
    public var systemBusAddress: String?
    /// Waits between attempts to reach a bus that is missing or went away (real time: the
    /// bus has its own thread).
    public var busReconnect = Backoff(base: 1, cap: 30, jitter: 0.5)
    /// At start, the first tick waits this long at most for the bus to say whether the
    /// connection is metered.
    public var busFirstAnswerWait: TimeInterval = 2
    /// The power-supply folder (`$OFFLINEFS_POWER_SUPPLY_DIR`, else `/sys/class/power_supply`).
    public var powerSupplyFolder = PowerSupply.defaultFolder
    /// While a power rule may hold something back, the supplies are read this often (sysfs
    /// tells no change), on the engine clock.
    public var powerPollInterval: TimeInterval = 5

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
    /// A network or power rule holds the item back: `idle` / `out-of-policy` naming the rule.
    case holdBack(rule: String)

    /// A download that completed before it could be stopped stays `cached`.
    var yieldsToCompletion: Bool {
        switch self {
        case .pause, .shutdown, .holdBack: true
        case .cancel, .delete, .evict, .licenceExpired: false
        }
    }
}

/// Retry bookkeeping of one item (in memory: a restart retries at once).
struct RetryState: Sendable {
    var attempts = 0
    var next: Date = .distantPast
}
