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
