/// The syncs asked for (`sync` lines, `offlinefs sync` through a mount, sources whose sync
/// interval passed) that have not started yet. One runner works through them; a request that
/// comes while it runs waits for the next round, and many such requests make one round: asked
/// every few seconds while a sync takes longer, a mount would otherwise start sync after
/// sync, each with its own thread and its catalog pages in memory.
struct SyncRequests {
    /// Whether a runner is working through the requests.
    var running = false
    private var everySource = false
    private var sourceNames: Set<String> = []

    /// Asks for a sync of `sourceName` (nil: every subscribed source).
    /// - Returns: true when the caller must start the runner (none is running).
    mutating func ask(_ sourceName: String?) -> Bool {
        if let sourceName { sourceNames.insert(sourceName) } else { everySource = true }
        defer { running = true }
        return !running
    }

    /// The next round for the runner, oldest asks first: nil (every source) covers the
    /// named ones. An empty round means stop, and `running` is false from then on.
    mutating func nextRound() -> [String?] {
        defer { everySource = false; sourceNames = [] }
        let round: [String?] = everySource ? [nil] : sourceNames.sorted()
        if round.isEmpty { running = false }
        return round
    }
}
