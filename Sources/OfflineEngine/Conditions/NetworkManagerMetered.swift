import OfflineDBus

/// Follows NetworkManager's `Metered` property on one bus connection: asks for it once, then
/// follows `PropertiesChanged` on its object, and `NameOwnerChanged` for NetworkManager
/// leaving (not metered) and coming back (asked again). Used on the connection's thread only.
final class NetworkManagerMetered {
    static let name = "org.freedesktop.NetworkManager"
    static let path = "/org/freedesktop/NetworkManager"

    private let connection: BusConnection
    private let report: (Bool) -> Void
    private var matches: [BusSlot] = []
    /// The `Get` in flight; replacing it forgets an older answer.
    private var pendingGet: BusSlot?

    /// Adds the two matches before asking, so no change falls between the answer and them
    /// (the bus handles one client's messages in order).
    init(_ connection: BusConnection, report: @escaping (_ metered: Bool) -> Void) throws(BusError) {
        self.connection = connection
        self.report = report
        matches.append(try connection.addMatch(
            "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',interface='org.freedesktop.DBus',"
                + "member='NameOwnerChanged',arg0='\(Self.name)'") { [unowned self] in ownerChanged($0) })
        matches.append(try connection.addMatch(
            "type='signal',sender='\(Self.name)',path='\(Self.path)',interface='org.freedesktop.DBus.Properties',"
                + "member='PropertiesChanged',arg0='\(Self.name)'") { [unowned self] in propertiesChanged($0) })
        try askMetered()
    }

    /// NMMetered: yes (1) and guess-yes (3) are metered; unknown (0), no (2), guess-no (4) not.
    static func isMetered(_ value: UInt32) -> Bool {
        value == 1 || value == 3
    }

    /// `Get` without auto-start: asking must not start a NetworkManager that is not running
    /// (the system bus would activate it). Any error (no owner, a timeout) is "not metered".
    private func askMetered() throws(BusError) {
        pendingGet = try connection.call(Self.name, Self.path, "org.freedesktop.DBus.Properties", "Get",
                                         arguments: [Self.name, "Metered"], autoStart: false,
                                         timeout: .seconds(10)) { [unowned self] answer in
            let value = try? answer.get().readVariantUInt32()
            report(value.map(Self.isMetered) ?? false)
        }
    }

    /// `NameOwnerChanged` (`sss`: name, old owner, new owner) for NetworkManager's name.
    private func ownerChanged(_ signal: BusMessage) {
        guard (try? signal.readString()) == Self.name, (try? signal.readString()) != nil,
              let owner = try? signal.readString() else { return }
        if owner.isEmpty {
            pendingGet = nil
            report(false)
        } else {
            try? askMetered()
        }
    }

    /// `PropertiesChanged` (`sa{sv}as`: interface, changed values, invalidated names).
    private func propertiesChanged(_ signal: BusMessage) {
        switch try? Self.meteredChange(signal) {
        case .value(let value)?:
            pendingGet = nil
            report(Self.isMetered(value))
        case .invalidated?:
            try? askMetered()
        case nil:
            break
        }
    }

    enum Change: Equatable {
        case value(UInt32)
        case invalidated
    }

    /// What a `PropertiesChanged` signal says of `Metered`; nil when it does not name it.
    static func meteredChange(_ signal: BusMessage) throws(BusError) -> Change? {
        guard try signal.readString() == name else { return nil }
        var value: UInt32?
        _ = try signal.enter(.array, "{sv}")
        while try signal.enter(.dictEntry, "sv") {
            if try signal.readString() == "Metered", try signal.peekVariantContents() == "u" {
                value = try signal.readVariantUInt32()
            } else {
                try signal.skip("v")
            }
            try signal.exit()
        }
        try signal.exit()
        if let value { return .value(value) }
        return try signal.readStrings().contains("Metered") ? .invalidated : nil
    }
}

extension BusMessage {
    /// The next argument, a variant holding a `u` (a property's value).
    func readVariantUInt32() throws(BusError) -> UInt32 {
        _ = try enter(.variant, "u")
        let value = try readUInt32()
        try exit()
        return value
    }
}
