import Dispatch
import Foundation
import OfflineEngine
import OfflineHTTP
import OfflineStore
import OfflineTestSupport
import Testing

/// `on-metered` against real parts: a private dbus-daemon configured as a system bus, and a
/// stand-in NetworkManager on it whose `Metered` the tests flip with busctl.
@Suite(.enabled(if: PrivateSystemBus.unavailableReason == nil, Comment(rawValue: PrivateSystemBus.unavailableReason ?? "")))
struct MeteredRuleTests {
    static let metered = "the connection is metered (on-metered pause)"

    /// An engine that asks NetworkManager on `bus`, with the loopback origin not exempt.
    private func fixture(_ bus: PrivateSystemBus, exemptLocal: Bool = false) throws -> EngineFixture {
        let f = try EngineFixture {
            $0.systemBusAddress = bus.address
            $0.busReconnect = Backoff(base: 0.05, cap: 0.2, jitter: 0)
        }
        if !exemptLocal { try f.store.setPolicy(name: "exempt-local-origins", value: "off") }
        return f
    }

    @Test func aMeteredConnectionStopsARunningDownloadUntilItIsNoLonger() throws {
        let bus = try PrivateSystemBus()
        defer { bus.stop() }
        try bus.startNetworkManager(metered: 4)  // guess-no
        let f = try fixture(bus)
        defer { f.close() }
        let big = try f.addItem("big.mp4", size: 400_000, seed: 1)
        let other = try f.addItem("other.mp4", size: 300_000, seed: 2)
        f.origin.setFault("/big.mp4", .trickle(bytesPerSecond: 20_000))
        f.start()
        // Given a download that is running
        try f.perform(.download(item: "src/big.mp4", options: DownloadOptions()))
        try f.wait(big, .downloading)
        // When NetworkManager says the connection is metered
        try bus.setMetered(1)
        // Then it stops within 5 s, idle, naming the rule
        let held = try f.wait(big, .idle, timeout: .seconds(5))
        #expect(held.error == .outOfPolicy)
        #expect(held.errorDetail == Self.metered)
        #expect(held.bytesPresent < 400_000)
        // And a program's read of another item still streams, with the origin's bytes
        #expect(try f.streams(other, seed: 2, 100_000..<160_000))
        // When it is no longer metered, the download resumes within 5 s and completes
        f.origin.clearFaults("/big.mp4")
        try bus.setMetered(2)
        try waitUntil(timeout: .seconds(5)) { [.downloading, .cached].contains(try f.item(big).state) }
        try f.wait(big, .cached)
        // And `other` stayed as a program left it: streamed, never requested
        #expect(try f.item(other).requested == false)
    }

    @Test func guessYesIsMeteredAndAQueuedDownloadWaitsForTheChange() throws {
        let bus = try PrivateSystemBus()
        defer { bus.stop() }
        try bus.startNetworkManager(metered: 3)  // guess-yes
        let f = try fixture(bus)
        defer { f.close() }
        let item = try f.addItem("a.mp4", size: 50_000)
        f.start()
        // A download asked on a metered connection never starts
        try f.perform(.download(item: "src/a.mp4", options: DownloadOptions()))
        let held = try f.wait(item, .idle)
        #expect(held.errorDetail == Self.metered)
        #expect(f.origin.requests(for: "/a.mp4").isEmpty)
        // `on-metered allow` lets it run
        try f.perform(.setPolicy(name: "on-metered", value: "allow"))
        try f.wait(item, .cached)
    }

    @Test func localOriginsAreExemptByDefault() throws {
        let bus = try PrivateSystemBus()
        defer { bus.stop() }
        try bus.startNetworkManager(metered: 1)
        let f = try fixture(bus, exemptLocal: true)
        defer { f.close() }
        let item = try f.addItem("a.mp4", size: 50_000)
        f.start()
        try f.perform(.download(item: "src/a.mp4", options: DownloadOptions()))
        try f.wait(item, .cached)
    }

    @Test func networkManagerLeavingMeansNotMeteredAndComingBackIsAskedAgain() throws {
        let bus = try PrivateSystemBus()
        defer { bus.stop() }
        try bus.startNetworkManager(metered: 1)
        let f = try fixture(bus)
        defer { f.close() }
        let first = try f.addItem("a.mp4", size: 50_000, seed: 1)
        let second = try f.addItem("b.mp4", size: 400_000, seed: 2)
        f.start()
        try f.perform(.download(item: "src/a.mp4", options: DownloadOptions()))
        #expect(try f.wait(first, .idle).errorDetail == Self.metered)
        // When NetworkManager's name loses its owner (it stopped), nothing says metered
        bus.stopNetworkManager()
        try f.wait(first, .cached, timeout: .seconds(5))
        // When it comes back saying metered, it is asked, and a running download stops
        try startSlowDownload(f, second, "b.mp4")
        try bus.startNetworkManager(metered: 1)
        #expect(try f.wait(second, .idle, timeout: .seconds(5)).errorDetail == Self.metered)
    }

    @Test func aBusThatGoesAwayIsNotMeteredAndIsReconnected() throws {
        let bus = try PrivateSystemBus()
        defer { bus.stop() }
        try bus.startNetworkManager(metered: 1)
        let f = try fixture(bus)
        defer { f.close() }
        let first = try f.addItem("a.mp4", size: 50_000, seed: 1)
        let second = try f.addItem("b.mp4", size: 400_000, seed: 2)
        f.start()
        try f.perform(.download(item: "src/a.mp4", options: DownloadOptions()))
        #expect(try f.wait(first, .idle).errorDetail == Self.metered)
        // When the bus itself goes away, there is no metered connection to respect
        bus.stopDaemon()
        try f.wait(first, .cached, timeout: .seconds(5))
        // When it is back with NetworkManager saying metered, the engine reconnects (after
        // its back-off) and a running download stops
        try startSlowDownload(f, second, "b.mp4")
        try bus.startDaemon()
        try bus.startNetworkManager(metered: 1)
        #expect(try f.wait(second, .idle, timeout: .seconds(5)).errorDetail == Self.metered)
    }

    /// Asks for `item`, served at 20 KB/s, and returns once it downloads.
    private func startSlowDownload(_ f: EngineFixture, _ item: Item, _ name: String) throws {
        f.origin.setFault("/\(name)", .trickle(bytesPerSecond: 20_000))
        try f.perform(.download(item: "src/\(name)", options: DownloadOptions()))
        try f.wait(item, .downloading)
    }

    @Test func noBusAtAllMeansDownloadsRun() throws {
        let f = try EngineFixture {
            $0.systemBusAddress = "unix:path=/nonexistent/offlinefs-test/system_bus_socket"
        }
        defer { f.close() }
        try f.store.setPolicy(name: "exempt-local-origins", value: "off")
        let item = try f.addItem("a.mp4", size: 50_000)
        f.start()
        try f.perform(.download(item: "src/a.mp4", options: DownloadOptions()))
        try f.wait(item, .cached)
    }
}
