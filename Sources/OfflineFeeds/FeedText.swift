/// Text clean-up shared by the parsers: trim, drop empty, cut to the byte limit.
enum FeedText {
    /// Trims ASCII whitespace, returns nil for empty text and cuts text longer than `limit`
    /// UTF-8 bytes on a scalar boundary. `cut` is set when the text was shortened.
    static func clean(_ text: String, limit: Int, cut: inout Bool) -> String? {
        let utf8 = text.utf8
        guard let first = utf8.firstIndex(where: { !isSpace($0) }) else { return nil }
        // `first` exists, so a last non-space byte exists too.
        let last = utf8.lastIndex(where: { !isSpace($0) }) ?? first
        let trimmed = utf8[first...last]
        if trimmed.count <= limit {
            if first == utf8.startIndex && last == utf8.index(before: utf8.endIndex) { return text }
            return String(Substring(trimmed))
        }
        cut = true
        return prefix(trimmed, bytes: limit)
    }

    /// Like `clean` but for callers that only warn about the field by name.
    static func clean(_ text: String?, limit: Int, field: String, warnings: inout FeedWarnings) -> String? {
        guard let text else { return nil }
        var cut = false
        let result = clean(text, limit: limit, cut: &cut)
        if cut { warnings.add("\(field) cut to \(limit) bytes") }
        return result
    }

    /// The longest prefix of at most `bytes` UTF-8 bytes that ends on a scalar boundary.
    static func prefix(_ utf8: Substring.UTF8View, bytes: Int) -> String {
        var end = utf8.index(utf8.startIndex, offsetBy: max(0, bytes), limitedBy: utf8.endIndex) ?? utf8.endIndex
        // Step back over continuation bytes (10xxxxxx) so no scalar is split.
        while end > utf8.startIndex, end < utf8.endIndex, utf8[end] & 0xC0 == 0x80 {
            end = utf8.index(before: end)
        }
        return String(Substring(utf8[utf8.startIndex..<end]))
    }

    /// The text without surrounding ASCII whitespace (no Foundation: this runs per item).
    static func trimmed(_ text: String) -> Substring {
        let utf8 = text.utf8
        guard let first = utf8.firstIndex(where: { !isSpace($0) }), let last = utf8.lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return Substring(utf8[first...last])
    }

    @inline(__always)
    static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}
