/// The texts of open `.status` and `.status.json` files, and the latest snapshot of each: a
/// `getattr` takes one and reports its size, and an open within `reuseFor` serves the same
/// bytes, so a copier that reads exactly `st_size` bytes gets the whole file.
struct StatusSnapshots {
    static let reuseFor: Duration = .seconds(1)

    private var next: UInt64 = 1
    private var openTexts: [UInt64: [UInt8]] = [:]
    private var latest: [Bool: (taken: ContinuousClock.Instant, contents: [UInt8])] = [:]

    /// The snapshot of `.status.json` (json) or `.status` taken within `reuseFor`, if any.
    func latest(json: Bool) -> [UInt8]? {
        guard let snapshot = latest[json], ContinuousClock.now - snapshot.taken < Self.reuseFor else { return nil }
        return snapshot.contents
    }

    mutating func keep(_ contents: [UInt8], json: Bool) {
        latest[json] = (.now, contents)
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
