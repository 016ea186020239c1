/// The number grammars of RFC 8216 4.2, strict: no signs, exponents, `nan` or `inf` (which
/// Swift's `Double(_:)` would accept).
enum HLSNumbers {
    /// decimal-integer: `[0-9]+`, within Int64.
    static func integer(_ text: some StringProtocol) -> Int64? {
        guard !text.isEmpty, text.utf8.count <= 19, text.utf8.allSatisfy(isDigit) else { return nil }
        return Int64(text)
    }

    /// decimal-floating-point `[0-9]+(.[0-9]*)?`, also `.5`; a leading `-` parses so callers
    /// can say "negative" rather than "not a number". Finite by construction.
    static func decimal(_ text: some StringProtocol) -> Double? {
        var digits = Substring(text)
        if digits.first == "-" { digits = digits.dropFirst() }
        guard digits.utf8.count <= 64 else { return nil }
        var seenDigit = false
        var seenPoint = false
        for byte in digits.utf8 {
            if isDigit(byte) {
                seenDigit = true
            } else if byte == UInt8(ascii: "."), !seenPoint {
                seenPoint = true
            } else {
                return nil
            }
        }
        guard seenDigit, let value = Double(text), value.isFinite else { return nil }
        return value
    }

    /// `0x` followed by exactly 32 hex digits, as 16 bytes.
    static func hex128(_ text: String) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count == 34, utf8[0] == UInt8(ascii: "0"), utf8[1] | 0x20 == UInt8(ascii: "x") else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        var index = 2
        while index < 34 {
            guard let high = hexValue(utf8[index]), let low = hexValue(utf8[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }
}

extension HLSNumbers {
    /// `<n>[@<o>]` (EXT-X-BYTERANGE, EXT-X-MAP BYTERANGE): length and optional offset.
    static func byteRange(_ text: some StringProtocol) -> (length: Int64, offset: Int64?)? {
        let parts = text.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)
        guard let length = integer(parts[0]) else { return nil }
        guard parts.count == 2 else { return (length, nil) }
        guard let offset = integer(parts[1]) else { return nil }
        return (length, offset)
    }
}
