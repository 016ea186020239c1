import Foundation
import Logging
import Synchronization
@testable import OfflineEngine
import OfflineStore
import OfflineTestSupport
import Testing

/// The `hook` policy (docs/hooks.md): which event-log lines run it, what its environment
/// says, and that a hook that hangs is ended while the engine goes on.
@Suite("Hooks")
struct HookTests {
    static func event(_ seq: Int64, _ kind: EventKind, item: Int64? = nil, source: Int64? = 1, _ message: String = "",
                      details: String? = nil) -> StoreEvent {
        StoreEvent(seq: seq, time: Date(timeIntervalSince1970: 0), kind: kind, itemID: item, sourceID: source,
                   message: message, details: details)
    }

    @Test func eventLinesMapToRuns() {
        var mapping = HookEvents()
        let runs = mapping.runs(for: [
            Self.event(1, .discovered, item: 7, "discovered sources/acme/A [a].mp4"),
            Self.event(2, .discovered, item: 8, "discovered sources/acme/B [b].mp4"),
            Self.event(3, .discovered, "discovered 3 more items in sources/acme/"),
            Self.event(4, .sync, "synced acme: 5 added"),
            Self.event(5, .sync, "synced acme: 0 added"),  // nothing new: no run
            Self.event(6, .state, item: 7, details: #"{"from":"downloading","to":"cached"}"#),
            Self.event(7, .state, item: 8, details: #"{"from":"downloading","to":"failed","error":"http-error"}"#),
            Self.event(8, .state, item: 9, details: #"{"from":"cached","to":"failed","error":"licence-expired"}"#),
            Self.event(9, .state, item: 9, details: #"{"from":"queued","to":"downloading"}"#),
            Self.event(10, .licenceExpiring, item: 9, "x: the licence expires at …"),
        ])
        #expect(runs == [
            HookRun(event: .sync, sourceID: 1, newItems: ["sources/acme/A [a].mp4", "sources/acme/B [b].mp4"], newItemCount: 5),
            HookRun(event: .cached, itemID: 7, sourceID: 1, state: "cached"),
            HookRun(event: .failed, itemID: 8, sourceID: 1, state: "failed"),
            HookRun(event: .licenceExpired, itemID: 9, sourceID: 1, state: "failed"),
            HookRun(event: .licenceExpiring, itemID: 9, sourceID: 1),
        ])
    }

    private static func fixture() throws -> EngineFixture {
        try EngineFixture { configuration in
            configuration.hooks.timeout = 1
            configuration.hooks.pollInterval = 0.02
        }
    }

    @Test func aHookRunsForEachEventKindWithItsEnvironment() throws {
        let f = try Self.fixture()
        defer { f.close() }
        let log = f.folder.path + "/hook.log"
        f.start()
        try f.perform(.setPolicy(name: "hook", value: #"echo "$OFFLINEFS_EVENT|$OFFLINEFS_PATH|$OFFLINEFS_STATE|$OFFLINEFS_NEW_ITEMS" >> "# + log
                                 + #"; [ -n "$OFFLINEFS_NEW_ITEMS_FILE" ] && sed 's/^/new|/' "$OFFLINEFS_NEW_ITEMS_FILE" >> "# + log + "; true"))
        // Syncs that find one item each
        let a = try f.addItem("a.mp4", size: 10_000)
        let rental = try f.addItem("r.mp4", size: 10_000, licence: LicenceTerms(kind: .rental, rentalDuration: 7200))
        // One downloads, one is not at the origin (failed at once), the rental expires
        try f.perform(.setPolicy(name: "retry-limit", value: "0"))
        let gone = try f.addEntry(CatalogEntry(contentID: "gone.mp4", title: "gone.mp4", type: .video, mediaURL: f.origin.url("/gone.mp4")))
        try f.perform(.download(item: "src/a.mp4", options: DownloadOptions()))
        try f.perform(.download(item: "src/gone.mp4", options: DownloadOptions()))
        try f.perform(.download(item: "src/r.mp4", options: DownloadOptions()))
        try f.wait(a, .cached)
        try f.wait(rental, .cached)
        try f.wait(gone, .failed)
        f.advance(3600 + 1)   // within the hour
        f.advance(3600)       // expired
        let expected = ["sync|||1", "new|sources/src/a.mp4 [a.mp4].mp4", "new|sources/src/r.mp4 [r.mp4].mp4", "cached|sources/src/a.mp4 [a.mp4].mp4|cached|",
                        "failed|sources/src/gone.mp4 [gone.mp4].mp4|failed|", "licence-expiring|sources/src/r.mp4 [r.mp4].mp4|",
                        "licence-expired|sources/src/r.mp4 [r.mp4].mp4|failed|"]
        func lines() -> [String] {
            String(decoding: FileManager.default.contents(atPath: log) ?? Data(), as: UTF8.self).split(separator: "\n").map(String.init)
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while !expected.allSatisfy({ want in lines().contains { $0.hasPrefix(want) } }), ContinuousClock.now < deadline {
            usleep(10_000)
        }
        for want in expected { #expect(lines().contains { $0.hasPrefix(want) }, "\(want) in \(lines())") }
    }

    @Test func aHookThatHangsIsEndedAndTheEngineGoesOn() throws {
        let f = try Self.fixture()
        defer { f.close() }
        f.start()
        try f.perform(.setPolicy(name: "hook", value: "sleep 30"))
        let start = try f.store.lastEventSeq()
        let a = try f.addItem("a.mp4", size: 10_000)  // a sync: the hook runs and hangs
        let b = try f.addItem("b.mp4", size: 10_000)
        try f.perform(.download(item: "src/b.mp4", options: DownloadOptions()))
        try f.wait(b, .cached)  // while the hook sleeps
        let deadline = ContinuousClock.now + .seconds(10)
        func ended() throws -> Bool {
            try f.store.events(after: start, limit: 1000).contains { $0.kind == .error && $0.message.contains("still running after 1 s") }
        }
        while try !ended(), ContinuousClock.now < deadline { usleep(10_000) }
        #expect(try ended())
        _ = a
    }

    /// A hook that fails says so in `.events`, where a script or a mount's user looks (it was
    /// a warning on the mount's standard error only: syslog when detached).
    @Test func aHookThatFailsLeavesAnErrorEvent() throws {
        let f = try Self.fixture()
        defer { f.close() }
        f.start()
        try f.perform(.setPolicy(name: "hook", value: "exit 5"))
        let start = try f.store.lastEventSeq()
        let a = try f.addItem("a.mp4", size: 10_000)
        try f.perform(.download(item: "src/a.mp4", options: DownloadOptions()))
        try f.wait(a, .cached)
        let deadline = ContinuousClock.now + .seconds(10)
        func failed() throws -> Bool {
            try f.store.events(after: start, limit: 1000).contains {
                $0.kind == .error && $0.itemID == a.id && $0.message == "hook for cached exited with status 5"
            }
        }
        while try !failed(), ContinuousClock.now < deadline { usleep(10_000) }
        #expect(try failed())
    }

    /// A mount's administrator reads its log (journald), not `.events`: error events go there
    /// too, ten a minute at most, the rest counted with the next minute's first.
    @Test func errorEventsGoToTheLogTenAMinute() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("offlinefs-hook-log-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let now = Mutex(Date(timeIntervalSince1970: 1_750_000_000))
        let store = try LibraryStore.open(folder: folder, clock: { now.withLock { $0 } })
        let lines = LogLines()
        var settings = HookRunner.Settings()
        settings.pollInterval = 0.02
        let runner = HookRunner(store: store, settings: settings, logger: Logger(label: "test") { _ in lines })
        runner.start()
        defer { runner.stop() }
        func waitFor(_ count: Int) {
            let deadline = ContinuousClock.now + .seconds(10)
            while lines.messages.count < count, ContinuousClock.now < deadline { usleep(10_000) }
        }
        // Given twelve errors within a minute, among other events
        for n in 1...12 {
            try store.appendEvent(kind: .error, message: "sync of src failed: HTTP 404 (\(n))")
            try store.appendEvent(kind: .policy, message: "retry-limit = \(n)")
        }
        waitFor(10)
        #expect(lines.messages == (1...10).map { "sync of src failed: HTTP 404 (\($0))" })
        // When one comes a minute later, the two not logged are counted first
        now.withLock { $0 += 61 }
        try store.appendEvent(kind: .error, message: "sync of src failed: HTTP 404 (13)")
        waitFor(12)
        #expect(lines.messages.suffix(2) == ["2 more error events not logged (offlinefs status, .events)",
                                             "sync of src failed: HTTP 404 (13)"])
    }

    @Test func hookValuesAreOneLineCommandsOrNone() throws {
        #expect(try Policy.hook.canonicalize("notify-send \"$OFFLINEFS_PATH\"") == "notify-send \"$OFFLINEFS_PATH\"")
        #expect(try Policy.hook.canonicalize("") == "none")
        #expect(try Policy.hook.canonicalize("off") == "none")
        #expect(throws: StoreError.self) { try Policy.hook.canonicalize("a\nb") }
    }
}
