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
