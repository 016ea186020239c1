/// The texts of open `.status` and `.status.json` files, and the latest snapshot of each: a
/// `getattr` takes one and reports its size, and an open soon after serves the same bytes, so
/// a copier that reads exactly `st_size` bytes gets the whole file.
///
/// A snapshot serves for a second, or four times as long as it took to make (rendering takes
/// at most a fifth of the time, however often `ls -l` looks). One that took `slowRender` or
/// more (a library with many thousands of requested items) is made again in the background
/// when it expires while requests go on with the old one: `ls -la` of the mount or a file
/// manager opening it waits for no render but the very first.
struct StatusSnapshots {
    static let reuseFor: Duration = .seconds(1)
    static let slowRender: Duration = .milliseconds(100)

    /// What a request for a snapshot does.
    enum Answer: Equatable {
        case serve([UInt8])
        /// Serves these, and renders a new snapshot in the background (`keep` when done).
        case serveAndRefresh([UInt8])
        /// Renders one now and `keep`s it.
        case render
    }

    private struct Snapshot {
        var taken: ContinuousClock.Instant
        var cost: Duration
        var contents: [UInt8]
    }

    private var next: UInt64 = 1
    private var openTexts: [UInt64: [UInt8]] = [:]
    private var latest: [Bool: Snapshot] = [:]
    private var refreshing: Set<Bool> = []

    /// For `.status.json` (json) or `.status`, at `now`.
    mutating func answer(json: Bool, now: ContinuousClock.Instant = .now) -> Answer {
        guard let snapshot = latest[json] else { return .render }
        if now - snapshot.taken < max(Self.reuseFor, snapshot.cost * 4) { return .serve(snapshot.contents) }
        guard snapshot.cost >= Self.slowRender else { return .render }
        guard refreshing.insert(json).inserted else { return .serve(snapshot.contents) }
        return .serveAndRefresh(snapshot.contents)
    }

    /// A snapshot made now that took `cost` to render.
    mutating func keep(_ contents: [UInt8], json: Bool, cost: Duration, now: ContinuousClock.Instant = .now) {
        latest[json] = Snapshot(taken: now, cost: cost, contents: contents)
        refreshing.remove(json)
    }

    /// A handle for an open file that reads `contents`.
    mutating func open(_ contents: [UInt8]) -> UInt64 {
        defer { next += 1 }
        openTexts[next] = contents
        return next
    }

    func contents(_ handle: UInt64) -> [UInt8] {
        openTexts[handle] ?? []
    }

    mutating func close(_ handle: UInt64) {
        openTexts[handle] = nil
    }
}
