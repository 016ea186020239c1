import Foundation
import OfflineHTTP
import OfflineStore

/// The network and power rules (DESIGN §1 `on-metered`, `on-battery`, `min-battery`): which
/// one holds back a media download now, as a pure function of the policies and of what the
/// system says. The message names the rule; it becomes the item's `error` detail.
public enum NetworkPowerRules {
    /// What the system says now.
    public struct Conditions: Sendable, Equatable {
        /// NetworkManager calls the connection metered (yes or guess-yes).
        public var metered: Bool
        public var power: PowerState

        public init(metered: Bool = false, power: PowerState = .mains) {
            self.metered = metered
            self.power = power
        }

        /// Not metered, on mains: no rule can hold.
        public static let unrestricted = Conditions()
    }

    /// The message of the first rule that holds back a media download, or nil.
    /// - Parameter originIsLocal: the media comes from loopback or a private network
    ///   (`isLocalOrigin`), which `exempt-local-origins` lets through.
    public static func holding(_ policies: PolicySet, _ conditions: Conditions, originIsLocal: Bool) -> String? {
        if originIsLocal && policies.exemptLocalOrigins { return nil }
        if policies.pauseOnMetered && conditions.metered { return "the connection is metered (on-metered pause)" }
        guard conditions.power.onBattery else { return nil }
        if policies.pauseOnBattery { return "on battery (on-battery pause)" }
        if let percent = conditions.power.batteryPercent, percent < policies.minBattery {
            return "battery at \(percent) % (min-battery \(policies.minBattery))"
        }
        return nil
    }

    /// Whether a power rule may hold, so that the power supplies are worth reading.
    public static func readsPower(_ policies: PolicySet) -> Bool {
        policies.pauseOnBattery || policies.minBattery > 0
    }

    /// Whether media at `mediaURL` comes from loopback or a private network (the demo, a NAS),
    /// judged on the URL's host as written: an IP literal, or a local name such as
    /// `localhost` or `nas.local`. A name that only resolves to a private address is not
    /// looked up (a scheduler tick does not wait for DNS).
    public static func isLocalOrigin(mediaURL: String?) -> Bool {
        guard let text = mediaURL, let host = URL(string: text)?.host, !host.isEmpty else { return false }
        return AddressClass.isNonPublic(host: host)
    }
}
