import Foundation

/// A hand-rolled parser for RFC 3339 / ISO 8601 timestamps (Atom `<updated>`, JSON
/// `published`): `2024-05-01T12:30:00Z`, `2024-05-01T12:30:00.250+02:00`, `2024-05-01 12:30Z`,
/// and a bare date `2024-05-01` (midnight UTC). A missing zone is taken as UTC.
enum RFC3339Date {
    static func parse(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { parse(bytes: $0) }
    }

    static func parse(bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        var cursor = DateCursor(bytes)
        cursor.skipSeparators()
        let start = cursor.index
        guard let year = cursor.number(maxDigits: 4), cursor.index - start == 4,
            cursor.take(UInt8(ascii: "-")), let month = cursor.number(maxDigits: 2),
            cursor.take(UInt8(ascii: "-")), let day = cursor.number(maxDigits: 2)
        else { return nil }
        var hour = 0, minute = 0, second = 0.0, offset = 0
        if let sep = cursor.current, sep == UInt8(ascii: "T") || sep == UInt8(ascii: "t") || sep == 0x20 {
            cursor.index += 1
            guard let h = cursor.number(maxDigits: 2), cursor.take(UInt8(ascii: ":")),
                let m = cursor.number(maxDigits: 2)
            else { return nil }
            hour = h
            minute = m
            if cursor.take(UInt8(ascii: ":")) {
                guard let s = cursor.number(maxDigits: 2) else { return nil }
                second = Double(s) + cursor.fraction()
            }
            if cursor.current == 0x20 { cursor.index += 1 }
            if cursor.current == UInt8(ascii: "z") {
                cursor.index += 1
            } else if !cursor.atEnd {
                guard let zone = cursor.zoneOffset() else { return nil }
                offset = zone
            }
        }
        cursor.skipSeparators()
        guard cursor.atEnd else { return nil }
        return CivilTime.date(year: year, month: month, day: day, hour: hour, minute: minute, second: second, offsetSeconds: offset)
    }
}

/// Durations as feeds write them: `3723`, `3723.5`, `62:03`, `1:02:03` (iTunes `SS`, `MM:SS`,
/// `HH:MM:SS`), in seconds. Negative, non-finite or absurd values are nil.
enum MediaDuration {
    static func parse(_ text: String) -> Double? {
        let trimmed = FeedText.trimmed(text)
        var total = 0.0, part = 0.0, parts = 1, digits = 0
        var fractionScale = 0.0  // 0 while reading the integer part
        for byte in trimmed.utf8 {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                let digit = Double(byte - 0x30)
                if fractionScale == 0 { part = part * 10 + digit } else { part += digit * fractionScale; fractionScale /= 10 }
                digits += 1
            case UInt8(ascii: ":"):
                // Only the last part may have a fraction; at most HH:MM:SS.
                guard digits > 0, fractionScale == 0, parts < 3 else { return nil }
                total = (total + part) * 60
                part = 0
                digits = 0
                parts += 1
            case UInt8(ascii: "."):
                guard fractionScale == 0 else { return nil }
                fractionScale = 0.1
            default:
                return nil
            }
            guard digits <= 12 else { return nil }
        }
        guard digits > 0 else { return nil }
        return valid(total + part)
    }

    /// A duration from a JSON number or attribute, if sane (0 ... 10 years).
    static func valid(_ seconds: Double) -> Double? {
        seconds.isFinite && seconds >= 0 && seconds < 315_360_000 ? seconds : nil
    }
}
