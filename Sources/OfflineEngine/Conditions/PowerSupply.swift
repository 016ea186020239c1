import Foundation

/// Whether the machine runs on battery, and how full it is, as the kernel's power-supply
/// class shows it (`/sys/class/power_supply`, one folder per supply; sysfs-class-power(5)).
public struct PowerState: Sendable, Equatable {
    /// No line power (mains, USB, wireless charger) online, and a system battery present.
    public var onBattery: Bool
    /// The system batteries' mean `capacity` in percent; nil without one.
    public var batteryPercent: Int?

    public init(onBattery: Bool = false, batteryPercent: Int? = nil) {
        self.onBattery = onBattery
        self.batteryPercent = batteryPercent
    }

    /// A machine on mains with no battery (a desktop, a server).
    public static let mains = PowerState()
}

/// Reads `PowerState` from a power-supply folder. sysfs has no change notification for these
/// files, so the scheduler reads them again every few seconds while a power rule may hold.
public enum PowerSupply {
    /// The kernel's folder; `OFFLINEFS_POWER_SUPPLY_DIR` replaces it (tests, containers).
    public static var defaultFolder: String {
        ProcessInfo.processInfo.environment["OFFLINEFS_POWER_SUPPLY_DIR"] ?? "/sys/class/power_supply"
    }

    /// Supplies that power the machine when online.
    private static let lineTypes: Set<String> = ["Mains", "USB", "Wireless"]

    /// The state the supplies in `folder` show. A missing or unreadable folder is a machine on
    /// mains: a rule about batteries never holds back downloads on a machine without one.
    public static func read(folder: String) -> PowerState {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return .mains }
        var lineSupplies = 0, lineOnline = false, batteries = 0, discharging = false
        var capacities: [Int] = []
        for name in names.sorted() {
            let supply = folder + "/" + name
            func value(_ attribute: String) -> String? {
                guard let text = try? String(contentsOfFile: supply + "/" + attribute, encoding: .utf8) else { return nil }
                return text.trimmingCharacters(in: .whitespacesAndNewlines)
            }
            guard let type = value("type") else { continue }
            if lineTypes.contains(type) {
                lineSupplies += 1
                if value("online") == "1" { lineOnline = true }
            } else if type == "Battery", value("scope") != "Device", value("present") != "0" {
                // scope=Device: a mouse's or a headset's battery, not the machine's.
                batteries += 1
                if let capacity = value("capacity").flatMap(Int.init) { capacities.append(min(100, max(0, capacity))) }
                if value("status") == "Discharging" { discharging = true }
            }
        }
        guard batteries > 0 else { return .mains }
        // Without any line-power supply listed (some machines show none), the battery's own
        // status tells.
        let onBattery = lineSupplies > 0 ? !lineOnline : discharging
        let percent = capacities.isEmpty ? nil : capacities.reduce(0, +) / capacities.count
        return PowerState(onBattery: onBattery, batteryPercent: percent)
    }
}
