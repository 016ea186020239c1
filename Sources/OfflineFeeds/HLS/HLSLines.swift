import Foundation

/// Splits a playlist into numbered lines: LF or CRLF, a leading UTF-8 BOM dropped, every
/// line checked for valid UTF-8 and `maxLineBytes` before it becomes a String.
enum HLSLines {
    struct Line {
        /// 1-based.
        var number: Int
        /// Without its line break and surrounding spaces and tabs.
        var text: Substring
    }

    static func split(_ data: Data, limits: HLSLimits) throws(HLSParseError) -> [Line] {
        var lines: [Line] = []
        var failure: HLSParseError?
        data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            var start = 0
            if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { start = 3 }
            var number = 0
            while start < bytes.count {
                number += 1
                var end = start
                while end < bytes.count, bytes[end] != 0x0A { end += 1 }
                let next = end + 1
                if end > start, bytes[end - 1] == 0x0D { end -= 1 }
                guard end - start <= limits.maxLineBytes else {
                    failure = HLSParseError(
                        .tooLarge, line: number, "the line is \(end - start) bytes, more than the limit of \(limits.maxLineBytes)")
                    return
                }
                guard let text = String(validating: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self) else {
                    failure = HLSParseError(.malformed, line: number, "the line is not valid UTF-8")
                    return
                }
                lines.append(Line(number: number, text: trimmed(text)))
                start = next
            }
        }
        if let failure { throw failure }
        return lines
    }

    private static func trimmed(_ text: String) -> Substring {
        let utf8 = text.utf8
        let isBlank: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 }
        guard let first = utf8.firstIndex(where: { !isBlank($0) }), let last = utf8.lastIndex(where: { !isBlank($0) }) else {
            return ""
        }
        return Substring(utf8[first...last])
    }
}
