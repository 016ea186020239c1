import Dispatch
import Foundation
import OfflineEngine
import OfflineHTTP
import OfflineStore
import OfflineTestSupport
import Testing

/// The network and power rules as pure functions: which rule holds, its message, and what a
/// power-supply folder says.
@Suite struct NetworkPowerRuleTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var set: [String: String] = [:]
        var metered = false
        var power = PowerState.mains
        var local = false
        var holds: String?
        var testDescription: String { name }
    }

    static let battery50 = PowerState(onBattery: true, batteryPercent: 50)
    static let battery15 = PowerState(onBattery: true, batteryPercent: 15)
    static let charging15 = PowerState(onBattery: false, batteryPercent: 15)

    @Test(arguments: [
        Case(name: "nothing holds by default", holds: nil),
        Case(name: "metered, default on-metered pause", metered: true, holds: "the connection is metered (on-metered pause)"),
        Case(name: "metered, on-metered allow", set: ["on-metered": "allow"], metered: true, holds: nil),
        Case(name: "metered, but a local origin", metered: true, local: true, holds: nil),
        Case(name: "metered, local origin not exempt", set: ["exempt-local-origins": "off"], metered: true, local: true,
             holds: "the connection is metered (on-metered pause)"),
        Case(name: "on battery, default on-battery allow", power: battery15, holds: nil),
        Case(name: "on battery, on-battery pause", set: ["on-battery": "pause"], power: battery50,
             holds: "on battery (on-battery pause)"),
        Case(name: "on mains, on-battery pause", set: ["on-battery": "pause"], power: charging15, holds: nil),
        Case(name: "battery under min-battery", set: ["min-battery": "20"], power: battery15,
             holds: "battery at 15 % (min-battery 20)"),
        Case(name: "battery at min-battery", set: ["min-battery": "15"], power: battery15, holds: nil),
        Case(name: "low battery but charging", set: ["min-battery": "20"], power: charging15, holds: nil),
        Case(name: "battery of unknown charge", set: ["min-battery": "20"], power: PowerState(onBattery: true), holds: nil),
        Case(name: "metered and on battery: metered named first", set: ["on-battery": "pause"], metered: true,
             power: battery15, holds: "the connection is metered (on-metered pause)"),
        Case(name: "on battery, local origin exempt", set: ["on-battery": "pause"], power: battery50, local: true, holds: nil),
    ])
    func rule(_ c: Case) throws {
        var policies = PolicySet.defaults
        for (name, value) in c.set {
            let canonical = try Policy.named(name).canonicalize(value)
            switch try Policy.named(name) {
            case .onMetered: policies.pauseOnMetered = canonical == "pause"
            case .onBattery: policies.pauseOnBattery = canonical == "pause"
            case .minBattery: policies.minBattery = Int(canonical) ?? 0
            case .exemptLocalOrigins: policies.exemptLocalOrigins = canonical == "on"
            default: Issue.record("not a network or power policy: \(name)")
            }
        }
        let conditions = NetworkPowerRules.Conditions(metered: c.metered, power: c.power)
        #expect(NetworkPowerRules.holding(policies, conditions, originIsLocal: c.local) == c.holds)
    }

    @Test(arguments: [
        ("http://127.0.0.1:8080/a.mp4", true), ("http://[::1]/a.mp4", true), ("http://192.168.1.20/a.mp4", true),
        ("http://10.0.0.2/a.mp4", true), ("http://100.101.102.103/a.mp4", true), ("http://nas.local/a.mp4", true),
        ("http://localhost/a.mp4", true), ("https://media.example.com/a.mp4", false), ("https://93.184.215.14/a.mp4", false),
    ])
    func localOrigins(_ url: String, _ local: Bool) {
        #expect(NetworkPowerRules.isLocalOrigin(mediaURL: url) == local)
    }

    struct Folder: Sendable, CustomTestStringConvertible {
        var name: String
        var supplies: [String: [String: String]]
        var state: PowerState
        var testDescription: String { name }
    }

    static let ac = ["type": "Mains", "online": "1"]
    static let acOff = ["type": "Mains", "online": "0"]

    @Test(arguments: [
        Folder(name: "empty folder: mains", supplies: [:], state: .mains),
        Folder(name: "desktop: mains only", supplies: ["AC": ac], state: .mains),
        Folder(name: "laptop plugged in", supplies: ["AC": ac, "BAT0": ["type": "Battery", "capacity": "64", "status": "Charging"]],
               state: PowerState(onBattery: false, batteryPercent: 64)),
        Folder(name: "laptop unplugged", supplies: ["AC": acOff, "BAT0": ["type": "Battery", "capacity": "64", "status": "Discharging"]],
               state: PowerState(onBattery: true, batteryPercent: 64)),
        Folder(name: "USB-C charger online", supplies: [
            "AC": acOff, "ucsi-source-psy-USBC000:001": ["type": "USB", "online": "1"],
            "BAT0": ["type": "Battery", "capacity": "30", "status": "Charging"]],
               state: PowerState(onBattery: false, batteryPercent: 30)),
        Folder(name: "no line supply listed, discharging", supplies: ["BAT1": ["type": "Battery", "capacity": "12\n", "status": "Discharging\n"]],
               state: PowerState(onBattery: true, batteryPercent: 12)),
        Folder(name: "no line supply listed, full", supplies: ["BAT1": ["type": "Battery", "capacity": "100", "status": "Full"]],
               state: PowerState(onBattery: false, batteryPercent: 100)),
        Folder(name: "two batteries: the mean", supplies: [
            "AC": acOff, "BAT0": ["type": "Battery", "capacity": "80"], "BAT1": ["type": "Battery", "capacity": "21"]],
               state: PowerState(onBattery: true, batteryPercent: 50)),
        Folder(name: "a mouse's battery is not the machine's", supplies: [
            "AC": ac, "hidpp_battery_0": ["type": "Battery", "scope": "Device", "capacity": "5", "status": "Discharging"]],
               state: .mains),
        Folder(name: "an empty battery bay", supplies: ["AC": acOff, "BAT0": ["type": "Battery", "present": "0"]], state: .mains),
    ])
    func powerSupplyFolder(_ c: Folder) throws {
        let folder = try PowerFolder()
        defer { folder.remove() }
        for (name, attributes) in c.supplies { try folder.write(name, attributes) }
        #expect(PowerSupply.read(folder: folder.path) == c.state)
    }

    @Test func missingPowerSupplyFolderIsMains() {
        #expect(PowerSupply.read(folder: "/nonexistent/power_supply") == .mains)
    }
}

/// A power-supply folder as the kernel shows it (`/sys/class/power_supply`), written by a test.
struct PowerFolder {
    let path: String

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("offlinefs-power-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// Writes (or rewrites) a supply's attribute files, e.g. `["type": "Mains", "online": "1"]`.
    func write(_ supply: String, _ attributes: [String: String]) throws {
        let folder = path + "/" + supply
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for (name, value) in attributes {
            try (value.hasSuffix("\n") ? value : value + "\n").write(toFile: folder + "/" + name, atomically: true, encoding: .utf8)
        }
    }

    /// A laptop: `AC` online or not, `BAT0` at `percent`.
    func laptop(pluggedIn: Bool, percent: Int) throws {
        try write("AC", ["type": "Mains", "online": pluggedIn ? "1" : "0"])
        try write("BAT0", ["type": "Battery", "capacity": String(percent), "status": pluggedIn ? "Charging" : "Discharging"])
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

extension EngineFixture {
    /// Reads `range` of `item` as the mount does for a program, and tells whether the cache
    /// then holds the origin's bytes (the version `seed` names) there.
    func streams(_ item: Item, seed: UInt64, _ range: Range<Int64>) throws -> Bool {
        let done = DispatchSemaphore(value: 0)
        let outcome = Box<Result<Void, FetchError>>(.failure(FetchError(.timedOut, "no answer")))
        engine.transfers.fetcher.whenAvailable(itemID: item.id, file: "media", range: ByteRange(range.lowerBound, range.upperBound),
                                               readAhead: 0, deadline: .now + .seconds(10)) { result in
            outcome.value = result
            done.signal()
        }
        done.wait()
        try outcome.value.get()
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: engine.transfers.fetcher.cacheFilePath(itemID: item.id, file: "media")))
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(range.lowerBound))
        let size = try #require(item.size)
        return try handle.read(upToCount: range.count) == GeneratedBytes(size: size, seed: seed).bytes(in: range)
    }
}
