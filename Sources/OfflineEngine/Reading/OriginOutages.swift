import Synchronization

/// The outages readers have met, by origin (`scheme://host:port`). A player or a copier rides
/// out an origin out of reach (`ReaderClass.ridesOutOutages`), but only an outage that began
/// less than its bound ago: once one read has waited it out, the reads after it fail at once
/// until the origin answers again: a backup with the origin down must not wait the bound at
/// every read (rsync reads 256 KiB at a time; docs/reads.md).
final class OriginOutages: Sendable {
    private struct Outage {
        var since: ContinuousClock.Instant
        var last: ContinuousClock.Instant
    }

    /// How long an outage may be ridden out; also how long after its last failure it counts
    /// as over (nobody asked meanwhile).
    let bound: Duration
    private let outages = Mutex<[String: Outage]>([:])  // leaf lock
    /// Whether any outage is recorded: the answered reads then look at the table.
    private let any = Atomic<Bool>(false)

    init(bound: Duration) { self.bound = bound }

    /// Records an outage failure of `origin`; returns whether a read may still ride it out.
    func failed(_ origin: String, at now: ContinuousClock.Instant = .now) -> Bool {
        outages.withLock { outages in
            var outage = outages[origin] ?? Outage(since: now, last: now)
            if now - outage.last > bound { outage.since = now }
            outage.last = now
            outages[origin] = outage
            any.store(true, ordering: .relaxed)
            return now - outage.since < bound
        }
    }

    /// `origin` sent bytes: its outage, if any, is over.
    func answered(_ origin: @autoclosure () -> String?) {
        guard any.load(ordering: .relaxed), let origin = origin() else { return }
        outages.withLock { outages in
            outages[origin] = nil
            if outages.isEmpty { any.store(false, ordering: .relaxed) }
        }
    }
}
