@testable import OfflineMount
import Testing

/// When `.status` is rendered again: a quick render after a second, as the status files
/// always were; a slow one (a library with many thousands of requested items) in the
/// background, while requests go on with the last snapshot.
struct StatusSnapshotTests {
    let start = ContinuousClock.now

    @Test func aQuickSnapshotServesForASecondAndIsThenMadeAgainAtOnce() {
        var snapshots = StatusSnapshots()
        #expect(snapshots.answer(json: false, now: start) == .render)
        snapshots.keep([1], json: false, cost: .milliseconds(5), now: start)
        #expect(snapshots.answer(json: false, now: start + .milliseconds(900)) == .serve([1]))
        #expect(snapshots.answer(json: true, now: start + .milliseconds(900)) == .render, "each file has its own")
        #expect(snapshots.answer(json: false, now: start + .milliseconds(1100)) == .render)
    }

    @Test func aSlowSnapshotIsRenewedInTheBackgroundWhileRequestsGoOnWithIt() {
        var snapshots = StatusSnapshots()
        #expect(snapshots.answer(json: true, now: start) == .render, "the very first waits for its render")
        snapshots.keep([1], json: true, cost: .seconds(3), now: start)
        // Served for four times its cost
        #expect(snapshots.answer(json: true, now: start + .seconds(11)) == .serve([1]))
        // Then served on while one background render makes the next
        #expect(snapshots.answer(json: true, now: start + .seconds(13)) == .serveAndRefresh([1]))
        #expect(snapshots.answer(json: true, now: start + .seconds(14)) == .serve([1]), "no second render at once")
        snapshots.keep([2], json: true, cost: .seconds(3), now: start + .seconds(16))
        #expect(snapshots.answer(json: true, now: start + .seconds(16.5)) == .serve([2]))
    }
}
