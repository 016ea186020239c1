public import Foundation
public import OfflineStore

/// Which policy stops an item from downloading now (DESIGN §1 policies), as a pure function of
/// the item, the policies, the time, today's usage and the network and power conditions.
/// Space (cache-limit, free-space reserve) is `SpaceManager`'s: it may evict to make room.
public enum PolicyGate {
    public enum Verdict: Sendable, Equatable {
        case go
        /// Stop as `idle` with `code`; recheck at `until` (nil: when a policy changes).
        case wait(ItemErrorCode, String, until: Date?)
        /// Stop as `failed`: nothing will let it run but an explicit request.
        case fail(ItemErrorCode, String)
    }

    public static func check(_ item: Item, policies: PolicySet, licence: Licence?, now: Date, usedToday: Int64,
                             timeZone: TimeZone, conditions: NetworkPowerRules.Conditions = .unrestricted) -> Verdict {
        if let licence, LicenceClock.isExpired(licence, at: now) {
            return .fail(.licenceExpired, "the licence expired at \(licence.expiresAt.map(LicenceClock.iso) ?? "?")")
        }
        if let max = policies.fileSizeMax.bytes, let size = item.size, size > max {
            return .wait(.outOfPolicy, "\(size) bytes exceed file-size-max \(policies.fileSizeMax)", until: nil)
        }
        if !policies.downloadWindow.contains(now, timeZone: timeZone) {
            let opens = nextOpening(policies.downloadWindow, after: now, timeZone: timeZone)
            return .wait(.outOfPolicy, outsideWindow(policies.downloadWindow), until: opens)
        }
        // Rechecked when the conditions change (the bus watch pokes, the power poll ticks).
        if let rule = NetworkPowerRules.holding(policies, conditions, originIsLocal: NetworkPowerRules.isLocalOrigin(mediaURL: item.mediaURL)) {
            return .wait(.outOfPolicy, rule, until: nil)
        }
        if let limit = policies.dailyLimit.bytes {
            let need = max(0, (item.size ?? 0) - item.bytesPresent)
            // An item larger than the whole daily budget may start on a fresh day; otherwise
            // it would wait forever.
            let fits = usedToday + need <= limit || (usedToday == 0 && need > limit)
            if usedToday >= limit || !fits {
                return .wait(.dailyLimit, "\(usedToday) of \(policies.dailyLimit) used today",
                             until: nextDay(after: now, timeZone: timeZone))
            }
        }
        return .go
    }

    /// The next local midnight after `date`.
    public static func nextDay(after date: Date, timeZone: TimeZone) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let start = calendar.startOfDay(for: date)
        return calendar.date(byAdding: .day, value: 1, to: start) ?? date.addingTimeInterval(86_400)
    }

    static func outsideWindow(_ window: DownloadWindow) -> String {
        "outside the download window \(window)"
    }

    /// When `window` next opens after `date` (nil for `always`).
    public static func nextOpening(_ window: DownloadWindow, after date: Date, timeZone: TimeZone) -> Date? {
        guard case .between(let startMinute, _) = window else { return nil }
        return next(minute: startMinute, after: date, timeZone: timeZone)
    }

    /// When `window` next closes after `date` (nil for `always`).
    static func nextClosing(_ window: DownloadWindow, after date: Date, timeZone: TimeZone) -> Date? {
        guard case .between(_, let endMinute) = window else { return nil }
        return next(minute: endMinute, after: date, timeZone: timeZone)
    }

    /// The first time after `date` that is `minute` minutes past a local midnight.
    private static func next(minute: Int, after date: Date, timeZone: TimeZone) -> Date? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let dayStart = calendar.startOfDay(for: date)
        for dayOffset in 0...2 {
            guard let day = calendar.date(byAdding: .day, value: dayOffset, to: dayStart),
                  let time = calendar.date(byAdding: .minute, value: minute, to: day) else { continue }
            if time > date { return time }
        }
        return nil
    }
}
