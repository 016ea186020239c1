import Foundation

/// An attribute list (RFC 8216 4.2): `NAME=value,NAME="quoted, with commas",…`.
///
/// Values are kept as text (quotes removed) and typed by the accessor that reads them, so
/// each error names the attribute, the tag and the line.
struct HLSAttributeList {
    let tag: String
    let line: Int
    private var values: [String: (text: String, quoted: Bool)] = [:]

    init(_ text: Substring, tag: String, line: Int) throws(HLSParseError) {
        self.tag = tag
        self.line = line
        let utf8 = Array(text.utf8)
        var index = 0
        // Spaces are not in the grammar, but real playlists put them after commas.
        func skipBlanks() { while index < utf8.count, utf8[index] == 0x20 || utf8[index] == 0x09 { index += 1 } }
        skipBlanks()
        while index < utf8.count {
            let nameStart = index
            while index < utf8.count, utf8[index] != UInt8(ascii: "=") && utf8[index] != UInt8(ascii: ",") { index += 1 }
            let name = String(decoding: utf8[nameStart..<index], as: UTF8.self).trimmingCharacters(in: .whitespaces)
            guard index < utf8.count, utf8[index] == UInt8(ascii: "="), Self.isName(name) else {
                throw HLSParseError(.malformed, line: line, "\(tag) has a malformed attribute '\(Self.shown(name))'")
            }
            index += 1
            let value: String
            let quoted = index < utf8.count && utf8[index] == UInt8(ascii: "\"")
            if quoted {
                let valueStart = index + 1
                guard let close = utf8[valueStart...].firstIndex(of: UInt8(ascii: "\"")) else {
                    throw HLSParseError(.malformed, line: line, "\(tag) attribute \(name) has no closing quote")
                }
                value = String(decoding: utf8[valueStart..<close], as: UTF8.self)
                index = close + 1
                skipBlanks()
                guard index == utf8.count || utf8[index] == UInt8(ascii: ",") else {
                    throw HLSParseError(.malformed, line: line, "\(tag) attribute \(name) has text after its closing quote")
                }
            } else {
                let valueStart = index
                while index < utf8.count, utf8[index] != UInt8(ascii: ",") { index += 1 }
                value = String(decoding: utf8[valueStart..<index], as: UTF8.self).trimmingCharacters(in: .whitespaces)
            }
            // The RFC forbids repeats; two different URIs in one tag would be ambiguous.
            guard values[name] == nil else {
                throw HLSParseError(.malformed, line: line, "\(tag) has attribute \(name) twice")
            }
            values[name] = (value, quoted)
            if index < utf8.count { index += 1 }  // the comma
            skipBlanks()
        }
    }

    /// The value with its quotes removed, nil when absent.
    func string(_ name: String) -> String? { values[name]?.text }

    func requiredString(_ name: String) throws(HLSParseError) -> String {
        guard let value = values[name]?.text else {
            throw HLSParseError(.malformed, line: line, "\(tag) has no \(name) attribute")
        }
        return value
    }

    /// A decimal-integer that fits an Int64.
    func integer(_ name: String) throws(HLSParseError) -> Int64? {
        guard let text = values[name]?.text else { return nil }
        guard let value = HLSNumbers.integer(text) else {
            throw HLSParseError(.malformed, line: line, "\(tag) \(name) '\(Self.shown(text))' is not a whole number")
        }
        return value
    }

    /// A decimal-floating-point: finite and not negative.
    func decimal(_ name: String) throws(HLSParseError) -> Double? {
        guard let text = values[name]?.text else { return nil }
        guard let value = HLSNumbers.decimal(text), value >= 0 else {
            throw HLSParseError(.malformed, line: line, "\(tag) \(name) '\(Self.shown(text))' is not a number")
        }
        return value
    }

    /// `YES` or `NO`; `fallback` when absent.
    func flag(_ name: String, default fallback: Bool = false) throws(HLSParseError) -> Bool {
        switch values[name]?.text {
        case nil: return fallback
        case "YES": return true
        case "NO": return false
        case let text?:
            throw HLSParseError(.malformed, line: line, "\(tag) \(name) is '\(Self.shown(text))', not YES or NO")
        }
    }

    func resolution(_ name: String) throws(HLSParseError) -> HLSResolution? {
        guard let text = values[name]?.text else { return nil }
        let parts = text.split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let width = HLSNumbers.integer(parts[0]), let height = HLSNumbers.integer(parts[1]),
            width <= Int32.max, height <= Int32.max
        else {
            throw HLSParseError(.malformed, line: line, "\(tag) \(name) '\(Self.shown(text))' is not <width>x<height>")
        }
        return HLSResolution(width: Int(width), height: Int(height))
    }

    /// A 128-bit hexadecimal-sequence: `0x` and exactly 32 hex digits.
    func iv(_ name: String) throws(HLSParseError) -> [UInt8]? {
        guard let text = values[name]?.text else { return nil }
        guard let bytes = HLSNumbers.hex128(text) else {
            throw HLSParseError(.malformed, line: line, "\(tag) \(name) '\(Self.shown(text))' is not 0x and 32 hex digits")
        }
        return bytes
    }

    private static func isName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D }
    }

    /// Hostile text in an error message: control characters escaped, cut to 80 characters.
    static func shown(_ text: some StringProtocol) -> String {
        let cut = String(text.prefix(80)) + (text.count > 80 ? "…" : "")
        return cut.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? $0.escaped(asASCII: true) : String($0) }.joined()
    }
}
