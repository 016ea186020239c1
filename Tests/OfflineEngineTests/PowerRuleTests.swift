import Foundation
import OfflineEngine
import OfflineStore
import OfflineTestSupport
import Testing

/// `on-battery` and `min-battery` against a power-supply folder the tests write, read again
/// every 5 s of the engine's clock while a power rule may hold. The tests move the clock
/// without asking for a tick: only the poll's timer makes the scheduler look.
@Suite struct PowerRuleTests {
    /// An engine reading `power`, with the loopback origin not exempt and no system bus.
    private func fixture(_ power: PowerFolder) throws -> EngineFixture {
        let f = try EngineFixture {
            $0.powerSupplyFolder = power.path
            $0.systemBusAddress = "unix:path=/nonexistent/offlinefs-test/system_bus_socket"
        }
        try f.store.setPolicy(name: "exempt-local-origins", value: "off")
        return f
    }

    @Test func onBatteryPauseStopsARunningDownloadUntilThePlugIsBack() throws {
        let power = try PowerFolder()
        defer { power.remove() }
        try power.laptop(pluggedIn: true, percent: 80)
        let f = try fixture(power)
        defer { f.close() }
        try f.store.setPolicy(name: "on-battery", value: "pause")
        let big = try f.addItem("big.mp4", size: 400_000, seed: 1)
        let other = try f.addItem("other.mp4", size: 300_000, seed: 2)
        f.origin.setFault("/big.mp4", .trickle(bytesPerSecond: 20_000))
        f.start()
        // Given a download running on mains
        try f.perform(.download(item: "src/big.mp4", options: DownloadOptions()))
        try f.wait(big, .downloading)
        // When the plug is pulled, the next read of the supplies (within 5 s) stops it
        try power.laptop(pluggedIn: false, percent: 80)
        f.clock.advance(by: 5)  // only the poll timer ticks: no tickNow()
        let held = try f.wait(big, .idle, timeout: .seconds(5))
        #expect(held.error == .outOfPolicy)
        #expect(held.errorDetail == "on battery (on-battery pause)")
        // And a program's read of another item still streams, with the origin's bytes
        #expect(try f.streams(other, seed: 2, 0..<100_000))
        // When the plug is back, within 5 s it resumes and completes
        f.origin.clearFaults("/big.mp4")
        try power.laptop(pluggedIn: true, percent: 80)
        f.clock.advance(by: 5)  // only the poll timer ticks: no tickNow()
        try waitUntil(timeout: .seconds(5)) { [.downloading, .cached].contains(try f.item(big).state) }
        try f.wait(big, .cached)
    }

    @Test func minBatteryHoldsBelowItsChargeOnBatteryOnly() throws {
        let power = try PowerFolder()
        defer { power.remove() }
        try power.laptop(pluggedIn: false, percent: 50)
        let f = try fixture(power)
        defer { f.close() }
        try f.store.setPolicy(name: "min-battery", value: "20%")
        let big = try f.addItem("big.mp4", size: 400_000, seed: 1)
        f.origin.setFault("/big.mp4", .trickle(bytesPerSecond: 20_000))
        f.start()
        // On battery at 50 %, a download runs (on-battery allow is the default)
        try f.perform(.download(item: "src/big.mp4", options: DownloadOptions()))
        try f.wait(big, .downloading)
        // At 15 %, it stops
        try power.laptop(pluggedIn: false, percent: 15)
        f.clock.advance(by: 5)  // only the poll timer ticks: no tickNow()
        #expect(try f.wait(big, .idle, timeout: .seconds(5)).errorDetail == "battery at 15 % (min-battery 20)")
        // Plugged in at 15 %, the battery charges: it resumes
        f.origin.clearFaults("/big.mp4")
        try power.laptop(pluggedIn: true, percent: 15)
        f.clock.advance(by: 5)  // only the poll timer ticks: no tickNow()
        try f.wait(big, .cached)
    }

    @Test func theDefaultsLetDownloadsRunOnBattery() throws {
        let power = try PowerFolder()
        defer { power.remove() }
        try power.laptop(pluggedIn: false, percent: 3)
        let f = try fixture(power)
        defer { f.close() }
        let item = try f.addItem("a.mp4", size: 50_000)
        f.start()
        try f.perform(.download(item: "src/a.mp4", options: DownloadOptions()))
        try f.wait(item, .cached)
    }
}
