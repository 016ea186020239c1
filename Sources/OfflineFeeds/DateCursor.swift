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
