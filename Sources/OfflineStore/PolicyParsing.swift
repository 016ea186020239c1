import Foundation

/// Parsers and printers for policy values. Pure; the canonical forms they print parse back
/// to the same value.
enum PolicyParsing {
    static func integer(_ text: String, in range: ClosedRange<Int>) -> Int? {
        guard let n = Int(text), range.contains(n) else { return nil }
        return n
    }

    static func bool(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "on", "true", "yes", "1": true
        case "off", "false", "no", "0": false
        default: nil
        }
    }

    static func byteLimit(_ text: String) -> ByteLimit? {
        if ["unlimited", "none", "off"].contains(text.lowercased()) { return .unlimited }
        return bytes(text).map(ByteLimit.bytes)
    }

    /// Unit multipliers: single letters and IEC units are 1024-based (as `ls -h`, rclone);
    /// SI units with `B` are 1000-based.
    private static let units: [String: Double] = [
        "": 1, "b": 1,
        "k": 1024, "kib": 1024, "kb": 1e3,
        "m": 1048576, "mib": 1048576, "mb": 1e6,
        "g": 1073741824, "gib": 1073741824, "gb": 1e9,
        "t": 1099511627776, "tib": 1099511627776, "tb": 1e12,
    ]

    /// `4096`, `500MiB`, `10G`, `1.5GB` → bytes (whole, non-negative, at most 2^62).
    static func bytes(_ text: String) -> Int64? {
        let t = text.replacingOccurrences(of: " ", with: "")
        let split = t.firstIndex(where: { !($0.isASCII && ($0.isNumber || $0 == ".")) }) ?? t.endIndex
        let number = t[..<split], unit = t[split...].lowercased()
        guard !number.isEmpty, number.filter({ $0 == "." }).count <= 1, let value = Double(number),
              let multiplier = units[unit] else { return nil }
        let total = (value * multiplier).rounded()
        guard total.isFinite, total >= 0, total <= 4.6e18 else { return nil }
        return Int64(total)
    }

    /// The largest exact 1024-based unit, else 1000-based, else bytes: `10GiB`, `1500MB`, `4097`.
    static func formatBytes(_ n: Int64) -> String {
        if n == 0 { return "0" }
        for (unit, size) in [("TiB", Int64(1) << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)]
        where n % size == 0 {
            return "\(n / size)\(unit)"
        }
        for (unit, size) in [("TB", Int64(1_000_000_000_000)), ("GB", 1_000_000_000), ("MB", 1_000_000), ("KB", 1000)]
        where n % size == 0 {
            return "\(n / size)\(unit)"
        }
        return "\(n)"
    }

    /// `90s`, `30m`, `1h`, `2d`, `1h30m`, or a bare number of seconds → seconds.
    static func duration(_ text: String) -> TimeInterval? {
        let t = text.lowercased().replacingOccurrences(of: " ", with: "")
        guard !t.isEmpty else { return nil }
        if let seconds = Int(t) { return seconds >= 0 ? TimeInterval(seconds) : nil }
        var total = 0.0, number = ""
        for ch in t {
            if ch.isASCII, ch.isNumber || ch == "." {
                number.append(ch)
                continue
            }
            let unit: Double
            switch ch {
            case "s": unit = 1
            case "m": unit = 60
            case "h": unit = 3600
            case "d": unit = 86400
            case "w": unit = 604800
            default: return nil
            }
            guard let value = Double(number) else { return nil }
            total += value * unit
            number = ""
        }
        guard number.isEmpty, total.isFinite, total <= 3.2e9 else { return nil }
        return total.rounded()
    }

    /// The largest exact unit: `1h`, `90m`, `2d`, `45s`.
    static func formatDuration(_ seconds: TimeInterval) -> String {
        let s = Int64(seconds)
        for (unit, size) in [("d", Int64(86400)), ("h", 3600), ("m", 60)] where s > 0 && s % size == 0 {
            return "\(s / size)\(unit)"
        }
        return "\(s)s"
    }
}
