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
