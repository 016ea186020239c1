@testable import OfflineEngine
import Testing

/// The fetch planner (`CachedFileState.plan`): given what the file holds, the fetches running
/// and the waiters, which byte ranges are asked of the origin. A pure function of the state,
/// so it is tested as a table.
@Suite struct FetchPlanTests {
    private static let kib: Int64 = 1 << 10
    private static let mib: Int64 = 1 << 20

    /// A running fetch: where it writes next, where it stops, how far it may go before pausing.
    struct Running: Sendable {
        var cursor: Int64
        var stop: Int64
        var allowance: Int64
        /// How far readers allowed it (`.max`: all its allowance; less: a download allowed the rest).
        var readerAllowance = Int64.max
        var forReader = true
        /// Where it began, when it has received bytes (else at `cursor`) …
        var start: Int64?
        /// … for how long.
        var receivingFor: Duration?
    }

    /// A waiter: the bytes it wants, its read-ahead, what a fetch started for it asks for.
    struct Wanted: Sendable {
        var range: Range<Int64>
        var readAhead: Int64 = 0
        var length = FetchLength.streamWhenLarge
        var forDownload = false
    }

    /// A fetch as the plan leaves it: its range (start to stop) and allowance.
    struct Planned: Equatable, CustomStringConvertible {
        var start: Int64
        var stop: Int64
        var allowance: Int64
        /// A reader waits for it (else only a download does, and the transfer loop holds it back
        /// while a reader's fetch receives).
        var forReader = true
        var description: String {
            "\(start)..<\(stop == .max ? "end" : "\(stop)") allowed \(allowance == .max ? "all" : "\(allowance)")"
                + (forReader ? "" : ", a download's")
        }
    }

    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        var total: Int64?
        var present: [Range<Int64>] = []
        var running: [Running] = []
        var waiters: [Wanted]
        /// Every fetch after planning, running ones first, in the order made.
        var expected: [Planned]
        var testDescription: String { name }
    }

    static let rows: [Row] = [
        Row(name: "a small read asks for exactly its bytes", total: 10 * mib,
            waiters: [Wanted(range: 0..<(64 * kib))],
            expected: [Planned(start: 0, stop: 64 * kib, allowance: 64 * kib)]),
        Row(name: "a read with a large read-ahead streams to the end, allowed its read-ahead", total: 10 * mib,
            waiters: [Wanted(range: 0..<(64 * kib), readAhead: mib)],
            expected: [Planned(start: 0, stop: 10 * mib, allowance: 64 * kib + mib)]),
        Row(name: "a waiter that may not stream asks for exactly its range and read-ahead", total: 10 * mib,
            waiters: [Wanted(range: 0..<(128 * kib), readAhead: mib, length: .exact)],
            expected: [Planned(start: 0, stop: 128 * kib + mib, allowance: 128 * kib + mib)]),
        Row(name: "a player's small read streams to the end, allowed only its bytes", total: 10 * mib,
            waiters: [Wanted(range: (5 * mib)..<(5 * mib + 32 * kib), length: .stream)],
            expected: [Planned(start: 5 * mib, stop: 10 * mib, allowance: 5 * mib + 32 * kib)]),
        Row(name: "a player's next read joins its paused stream", total: 10 * mib,
            running: [Running(cursor: 5 * mib + 32 * kib, stop: 10 * mib, allowance: 5 * mib + 32 * kib)],
            waiters: [Wanted(range: (5 * mib + 32 * kib)..<(5 * mib + 64 * kib), readAhead: 256 * kib, length: .stream)],
            expected: [Planned(start: 5 * mib + 32 * kib, stop: 10 * mib, allowance: 5 * mib + 320 * kib)]),
        Row(name: "only the missing bytes are asked", total: 10 * mib, present: [0..<(100 * kib)],
            waiters: [Wanted(range: 0..<(200 * kib))],
            expected: [Planned(start: 100 * kib, stop: 200 * kib, allowance: 200 * kib)]),
        Row(name: "a fetch stops at the next held byte; the one after it streams, allowed what is wanted",
            total: 10 * mib, present: [(500 * kib)..<(600 * kib)],
            waiters: [Wanted(range: 0..<mib)],
            expected: [Planned(start: 0, stop: 500 * kib, allowance: 500 * kib),
                       Planned(start: 600 * kib, stop: 10 * mib, allowance: mib)]),
        Row(name: "a read 1 MiB ahead of a download's stream receiving 100 KiB a second gets a fetch of its own", total: 100 * mib,
            running: [Running(cursor: 200 * kib, stop: 100 * mib, allowance: 100 * mib, readerAllowance: 0, forReader: false,
                              start: 0, receivingFor: .seconds(2))],
            waiters: [Wanted(range: (1200 * kib)..<(1264 * kib))],
            expected: [Planned(start: 0, stop: 1200 * kib, allowance: 100 * mib, forReader: false),
                       Planned(start: 1200 * kib, stop: 100 * mib, allowance: 1264 * kib)]),
        Row(name: "a read 1 MiB ahead of a download's stream receiving 3 MiB a second waits for it", total: 100 * mib,
            running: [Running(cursor: 2 * mib, stop: 100 * mib, allowance: 100 * mib, readerAllowance: 0, forReader: false,
                              start: 0, receivingFor: .milliseconds(600))],
            waiters: [Wanted(range: (3 * mib)..<(3 * mib + 64 * kib))],
            expected: [Planned(start: 0, stop: 100 * mib, allowance: 100 * mib)]),
        Row(name: "a read 1 MiB ahead of a reader's stream that paused most of its 2 s waits for it", total: 100 * mib,
            running: [Running(cursor: 200 * kib, stop: 100 * mib, allowance: 200 * kib, start: 0, receivingFor: .seconds(2))],
            waiters: [Wanted(range: (1200 * kib)..<(1264 * kib))],
            expected: [Planned(start: 0, stop: 100 * mib, allowance: 1264 * kib)]),
        Row(name: "a read close ahead of a running fetch waits for it and lets it go further", total: 100 * mib,
            running: [Running(cursor: 0, stop: 100 * mib, allowance: mib)],
            waiters: [Wanted(range: (2 * mib)..<(2 * mib + 64 * kib), readAhead: mib)],
            expected: [Planned(start: 0, stop: 100 * mib, allowance: 3 * mib + 64 * kib)]),
        Row(name: "a far seek gets its own fetch; the running one stops where it would pause", total: 100 * mib,
            running: [Running(cursor: 0, stop: 100 * mib, allowance: mib)],
            waiters: [Wanted(range: (80 * mib)..<(80 * mib + 64 * kib))],
            expected: [Planned(start: 0, stop: mib, allowance: mib),
                       Planned(start: 80 * mib, stop: 100 * mib, allowance: 80 * mib + 64 * kib)]),
        Row(name: "a read a reader asked for before, within its read-ahead, joins the streaming fetch",
            total: 100 * mib, running: [Running(cursor: 0, stop: 100 * mib, allowance: 10 * mib)],
            waiters: [Wanted(range: (9 * mib)..<(9 * mib + 64 * kib))],
            expected: [Planned(start: 0, stop: 100 * mib, allowance: 10 * mib)]),
        Row(name: "a far seek gets its own fetch even when a download allowed the stream to the end",
            total: 100 * mib, running: [Running(cursor: 0, stop: 100 * mib, allowance: 100 * mib - 1)],
            waiters: [Wanted(range: (80 * mib)..<(80 * mib + 64 * kib))],
            expected: [Planned(start: 0, stop: 80 * mib, allowance: 100 * mib - 1),
                       Planned(start: 80 * mib, stop: 100 * mib, allowance: 80 * mib + 64 * kib)]),
        Row(name: "a seek past what readers asked of a stream a download allowed to the end gets its own fetch",
            total: 100 * mib, running: [Running(cursor: 0, stop: 100 * mib, allowance: 100 * mib - 1, readerAllowance: mib)],
            waiters: [Wanted(range: (6 * mib)..<(6 * mib + 64 * kib))],
            expected: [Planned(start: 0, stop: 6 * mib, allowance: 100 * mib - 1),
                       Planned(start: 6 * mib, stop: 100 * mib, allowance: 6 * mib + 64 * kib)]),
        Row(name: "a download's wait makes a fetch only downloads wait for", total: 10 * mib,
            waiters: [Wanted(range: 0..<Int64.max, forDownload: true)],
            expected: [Planned(start: 0, stop: 10 * mib, allowance: 10 * mib, forReader: false)]),
        Row(name: "a reader joining a download's fetch makes it a reader's", total: 100 * mib,
            running: [Running(cursor: 0, stop: 100 * mib, allowance: 100 * mib, readerAllowance: 0, forReader: false)],
            waiters: [Wanted(range: (mib)..<(mib + 64 * kib))],
            expected: [Planned(start: 0, stop: 100 * mib, allowance: 100 * mib)]),
        Row(name: "a read to the end of a file of known size stops there", total: 1_000,
            waiters: [Wanted(range: 900..<Int64.max)],
            expected: [Planned(start: 900, stop: 1_000, allowance: 1_000)]),
        Row(name: "bytes already present need no fetch", total: mib, present: [0..<mib],
            waiters: [Wanted(range: 0..<mib, readAhead: mib)],
            expected: []),
    ]

    @Test(arguments: rows)
    func plan(_ row: Row) {
        var state = CachedFileState()
        state.total = row.total
        state.present = RangeSet(row.present)
        let now = ContinuousClock.now
        for running in row.running {
            state.fetches[state.makeID()] = Fetch(generation: 0, start: running.start ?? running.cursor, askedEnd: running.stop,
                                                  cursor: running.cursor, firstByteAt: running.receivingFor.map { now - $0 },
                                                  stop: running.stop, allowance: running.allowance,
                                                  streams: running.allowance < running.stop,
                                                  forReader: running.forReader, readerAllowance: running.readerAllowance)
        }
        for wanted in row.waiters {
            state.waiters[state.makeID()] = Waiter(range: wanted.range, readAhead: wanted.readAhead,
                                                   length: wanted.length, forDownload: wanted.forDownload, completion: { _ in })
        }
        _ = state.plan(FetchSettings(), now: now)
        let planned = state.fetches.sorted { $0.key < $1.key }
            .map { Planned(start: $0.value.start, stop: $0.value.stop, allowance: $0.value.allowance, forReader: $0.value.forReader) }
        #expect(planned == row.expected)
    }
}
