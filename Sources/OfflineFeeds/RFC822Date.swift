import Foundation

/// A hand-rolled, allocation-free parser for RSS `pubDate` (RFC 822 / RFC 2822), because
/// `DateFormatter` is slow on Linux and a sync may parse 100,000 dates.
///
/// Lenient like feed readers are: the day name is optional, 2-digit years are accepted,
/// seconds are optional, and a missing or unknown zone is taken as UTC.
/// `Wed, 02 Oct 2002 13:00:00 GMT`, `2 Oct 2002 15:00 +0200`, `Wed, 02 Oct 02 08:00:00 EST`.
enum RFC822Date {
    static func parse(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { parse(bytes: $0) }
    }

    static func parse(bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        var cursor = DateCursor(bytes)
        cursor.skipSeparators()
        // Optional day name ("Wed," or "Wednesday,").
        var month: Int?
        if let word = cursor.letters() {
            if let m = monthNumber(word) {
                month = m  // "Oct 02 2002 …" order
            }
            cursor.skipSeparators()
        }
        var day: Int
        if month == nil {
            guard let d = cursor.number(maxDigits: 2) else { return nil }
            day = d
            cursor.skipSeparators()
            guard let word = cursor.letters(), let m = monthNumber(word) else { return nil }
            month = m
        } else {
            guard let d = cursor.number(maxDigits: 2) else { return nil }
            day = d
        }
        cursor.skipSeparators()
        let yearStart = cursor.index
        guard var year = cursor.number(maxDigits: 4) else { return nil }
        switch cursor.index - yearStart {
        case 2: year += year < 50 ? 2000 : 1900
        case 3: year += 1900
        default: break
        }
        cursor.skipSeparators()
        var hour = 0, minute = 0, second = 0.0
        if let h = cursor.number(maxDigits: 2) {
            guard cursor.take(UInt8(ascii: ":")), let m = cursor.number(maxDigits: 2) else { return nil }
            hour = h
            minute = m
            if cursor.take(UInt8(ascii: ":")) {
                guard let s = cursor.number(maxDigits: 2) else { return nil }
                second = Double(s) + cursor.fraction()
            }
        }
        cursor.skipSeparators()
        let offset = cursor.zoneOffset() ?? 0
        guard let month else { return nil }
        return CivilTime.date(year: year, month: month, day: day, hour: hour, minute: minute, second: second, offsetSeconds: offset)
    }

    private static func monthNumber(_ word: UnsafeBufferPointer<UInt8>) -> Int? {
        guard word.count >= 3 else { return nil }
        // Case-insensitive compare of the first three letters.
        let key = (UInt32(word[0] | 0x20) << 16) | (UInt32(word[1] | 0x20) << 8) | UInt32(word[2] | 0x20)
        switch key {
        case 0x6A_61_6E: return 1  // jan
        case 0x66_65_62: return 2  // feb
        case 0x6D_61_72: return 3  // mar
        case 0x61_70_72: return 4  // apr
        case 0x6D_61_79: return 5  // may
        case 0x6A_75_6E: return 6  // jun
        case 0x6A_75_6C: return 7  // jul
        case 0x61_75_67: return 8  // aug
        case 0x73_65_70: return 9  // sep
        case 0x6F_63_74: return 10  // oct
        case 0x6E_6F_76: return 11  // nov
        case 0x64_65_63: return 12  // dec
        default: return nil
        }
    }
}

/// A byte cursor for the date parsers.
struct DateCursor {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    var atEnd: Bool { index >= bytes.count }
    var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func skipSeparators() {
        while let b = current, b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D || b == UInt8(ascii: ",") { index += 1 }
    }

    mutating func take(_ byte: UInt8) -> Bool {
        guard current == byte else { return false }
        index += 1
        return true
    }

    /// Up to `maxDigits` decimal digits; nil if there is none.
    mutating func number(maxDigits: Int) -> Int? {
        var value = 0, count = 0
        while count < maxDigits, let b = current, b >= 0x30, b <= 0x39 {
            value = value * 10 + Int(b - 0x30)
            index += 1
            count += 1
        }
        return count == 0 ? nil : value
    }

    /// `.123` → 0.123 (digits beyond nanoseconds ignored); 0 when there is no fraction.
    mutating func fraction() -> Double {
        guard current == UInt8(ascii: ".") || current == UInt8(ascii: ",") else { return 0 }
        index += 1
        var value = 0.0, scale = 0.1
        while let b = current, b >= 0x30, b <= 0x39 {
            if scale > 1e-10 { value += Double(b - 0x30) * scale }
            scale /= 10
            index += 1
        }
        return value
    }

    /// A run of ASCII letters.
    mutating func letters() -> UnsafeBufferPointer<UInt8>? {
        let start = index
        while let b = current, (b | 0x20) >= 0x61, (b | 0x20) <= 0x7A { index += 1 }
        guard index > start else { return nil }
        return UnsafeBufferPointer(rebasing: bytes[start..<index])
    }

    /// `Z`, `+hh:mm`, `-hhmm`, `+hh`, or an RFC 822 zone name; nil when none or unknown.
    mutating func zoneOffset() -> Int? {
        guard let b = current else { return nil }
        if b == UInt8(ascii: "+") || b == UInt8(ascii: "-") {
            index += 1
            let start = index
            guard let first = number(maxDigits: 4) else { return nil }
            var hours: Int, minutes: Int
            if index - start > 2 {
                hours = first / 100
                minutes = first % 100
            } else {
                hours = first
                minutes = take(UInt8(ascii: ":")) ? number(maxDigits: 2) ?? 0 : 0
            }
            guard hours <= 23, minutes <= 59 else { return nil }
            let seconds = hours * 3600 + minutes * 60
            return b == UInt8(ascii: "-") ? -seconds : seconds
        }
        guard let word = letters() else { return nil }
        let upper = String(decoding: word, as: UTF8.self).uppercased()
        switch upper {
        case "Z", "GMT", "UT", "UTC": return 0
        case "EST": return -5 * 3600
        case "EDT": return -4 * 3600
        case "CST": return -6 * 3600
        case "CDT": return -5 * 3600
        case "MST": return -7 * 3600
        case "MDT": return -6 * 3600
        case "PST": return -8 * 3600
        case "PDT": return -7 * 3600
        default: return nil
        }
    }
}

/// Calendar arithmetic without Foundation's Calendar (proleptic Gregorian, UTC).
enum CivilTime {
    static func date(
        year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Double, offsetSeconds: Int
    ) -> Date? {
        guard (1...9999).contains(year), (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
            (0...23).contains(hour), (0...59).contains(minute), second >= 0, second < 61
        else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = Double(days * 86_400 + hour * 3600 + minute * 60 - offsetSeconds) + second
        return Date(timeIntervalSince1970: seconds)
    }

    /// Days since 1970-01-01 (Howard Hinnant's `days_from_civil`).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}
