import Foundation
import Glibc

/// IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) formatting and parsing, written by hand with
/// `gmtime_r`/`timegm` so connection threads share no DateFormatter.
enum HTTPDate {
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    static func format(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) "
            + "\(parts.tm_year + 1900) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }

    /// Whole seconds since the epoch, or `nil` for anything but a valid IMF-fixdate (the
    /// obsolete RFC 850 and asctime forms are treated as invalid, so the header is ignored).
    static func parse(_ text: String) -> Int64? {
        let fields = text.trimmingSpaces().split(separator: " ")
        guard fields.count == 6, fields[5] == "GMT", fields[0].hasSuffix(","),
              days.contains(String(fields[0].dropLast())),
              let day = Int32(fields[1]), fields[1].count == 2,
              let month = months.firstIndex(of: String(fields[2])),
              let year = Int32(fields[3]), fields[3].count == 4
        else { return nil }
        let clock = fields[4].split(separator: ":")
        guard clock.count == 3, clock.allSatisfy({ $0.count == 2 }),
              let hour = Int32(clock[0]), let minute = Int32(clock[1]), let second = Int32(clock[2]),
              (1...31).contains(day), (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        var parts = tm()
        parts.tm_year = year - 1900
        parts.tm_mon = Int32(month)
        parts.tm_mday = day
        parts.tm_hour = hour
        parts.tm_min = minute
        parts.tm_sec = second
        return Int64(timegm(&parts))
    }
}
