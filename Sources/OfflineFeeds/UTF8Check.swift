/// Byte-level UTF-8 validation shared by the XML sanitizer and the JSON preflight.
enum UTF8Check {
    /// The length of the valid UTF-8 sequence starting at `start` (a byte >= 0x80), or nil
    /// if it is invalid: a stray continuation byte, a truncated sequence, an overlong form,
    /// a surrogate, or beyond U+10FFFF. With `xmlCharacters`, U+FFFE and U+FFFF (which XML
    /// forbids) are invalid too.
    @inline(__always)
    static func sequenceLength(_ bytes: UnsafeBufferPointer<UInt8>, at start: Int, xmlCharacters: Bool = false) -> Int? {
        let lead = bytes[start]
        let length: Int
        var scalar: UInt32
        switch lead {
        case 0xC2...0xDF: length = 2; scalar = UInt32(lead & 0x1F)
        case 0xE0...0xEF: length = 3; scalar = UInt32(lead & 0x0F)
        case 0xF0...0xF4: length = 4; scalar = UInt32(lead & 0x07)
        default: return nil
        }
        guard start + length <= bytes.count else { return nil }
        for k in 1..<length {
            let b = bytes[start + k]
            guard b & 0xC0 == 0x80 else { return nil }
            scalar = scalar << 6 | UInt32(b & 0x3F)
        }
        let minimum: UInt32 = length == 2 ? 0x80 : length == 3 ? 0x800 : 0x10000
        guard scalar >= minimum, scalar <= 0x10FFFF, !(0xD800...0xDFFF).contains(scalar) else { return nil }
        if xmlCharacters && (scalar == 0xFFFE || scalar == 0xFFFF) { return nil }
        return length
    }
}
