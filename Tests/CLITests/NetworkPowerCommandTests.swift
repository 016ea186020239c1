import Foundation
import OfflineTestSupport
import Testing

/// The network and power rules through the program as shipped: the system bus found from
/// `DBUS_SYSTEM_BUS_ADDRESS` (sd_bus_open_system), the power supplies from
/// `OFFLINEFS_POWER_SUPPLY_DIR`, the policies set and shown by `set` and `get`.
@Suite("offlinefs and the network and power rules")
struct NetworkPowerCommandTests {
    private func setUp(_ origin: TestOrigin) throws -> CLIRunner {
        origin.serve("/m0.mp4", .generated(size: 300_000, seed: 1, contentType: "video/mp4"))
        let url = origin.serveFeed(path: "/catalog.json", json: #"""
            {"offlinefs": 1, "items": [{"id": "m0", "title": "Movie 0", "type": "video", "url": "/m0.mp4", "size": 300000}]}
            """#)
        let cli = CLIRunner()
        try cli.run("source", "add", "acme", url)
        #expect(try cli.run("sync").status == 0)
        // The test origin is on loopback, which the rules spare by default
        #expect(try cli.run("set", "exempt-local-origins", "off").stdout == "exempt-local-origins = off\n")
        return cli
    }

    @Test(.enabled(if: PrivateSystemBus.unavailableReason == nil, Comment(rawValue: PrivateSystemBus.unavailableReason ?? "")))
    func downloadWaitOnAMeteredConnectionSaysWhyAndRunsOnceItIsNot() throws {
        let bus = try PrivateSystemBus()
        defer { bus.stop() }
        try bus.startNetworkManager(metered: 1)
        let origin = try TestOrigin()
        defer { origin.stop() }
        let cli = try setUp(origin)
        defer { cli.removeLibrary() }
        let environment = ["DBUS_SYSTEM_BUS_ADDRESS": bus.address]
        // When a download is asked on a connection NetworkManager calls metered
        let held = try cli.run("download", "acme/m0", "--wait", environment: environment)
        // Then it ends idle, naming the rule, and nothing was fetched
        #expect(held.status != 0)
        #expect(held.stderr.contains("Movie 0 [m0].mp4: idle (out-of-policy: the connection is metered (on-metered pause))"),
                "\(held.stderr)")
        #expect(origin.requests(for: "/m0.mp4").isEmpty)
        // When the connection is no longer metered, the same command downloads it
        try bus.setMetered(2)
        let done = try cli.run("download", "acme/m0", "--wait", environment: environment)
        #expect(done.status == 0, "\(done.stderr)")
        #expect(done.stdout.contains("Movie 0 [m0].mp4 (cached)"), "\(done.stdout)")
    }

    @Test func downloadWaitOnBatteryWithOnBatteryPause() throws {
        let power = FileManager.default.temporaryDirectory.appendingPathComponent("offlinefs-power-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: power) }
        for (supply, attributes) in [("AC", ["type": "Mains", "online": "0"]),
                                     ("BAT0", ["type": "Battery", "capacity": "40", "status": "Discharging"])] {
            let folder = power.appendingPathComponent(supply)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for (name, value) in attributes { try "\(value)\n".write(to: folder.appendingPathComponent(name), atomically: true, encoding: .utf8) }
        }
        let origin = try TestOrigin()
        defer { origin.stop() }
        let cli = try setUp(origin)
        defer { cli.removeLibrary() }
        // No bus: the machine's own must not decide this test
        let environment = ["OFFLINEFS_POWER_SUPPLY_DIR": power.path,
                           "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/offlinefs-test/system_bus_socket"]
        // On battery, with the default on-battery allow, min-battery 50 holds it back
        #expect(try cli.run("set", "min-battery", "50%").stdout == "min-battery = 50\n")
        let low = try cli.run("download", "acme/m0", "--wait", environment: environment)
        #expect(low.stderr.contains("idle (out-of-policy: battery at 40 % (min-battery 50))"), "\(low.stderr)")
        // With on-battery pause, the battery alone does
        try cli.run("set", "min-battery", "default")
        try cli.run("set", "on-battery", "pause")
        let held = try cli.run("download", "acme/m0", "--wait", environment: environment)
        #expect(held.status != 0)
        #expect(held.stderr.contains("idle (out-of-policy: on battery (on-battery pause))"), "\(held.stderr)")
        // `get` shows the rules with their values
        let policies = try cli.run("get", "--json")
        let values = try #require(try JSONSerialization.jsonObject(with: Data(policies.stdout.utf8)) as? [String: String])
        #expect(values["on-metered"] == "pause" && values["on-battery"] == "pause" && values["min-battery"] == "0")
        #expect(values["exempt-local-origins"] == "off")
        // With on-battery allow, it downloads on battery
        try cli.run("set", "on-battery", "allow")
        let done = try cli.run("download", "acme/m0", "--wait", environment: environment)
        #expect(done.status == 0, "\(done.stderr)")
    }
}
