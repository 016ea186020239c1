/// Looks at a document's first bytes to tell JSON, RSS, Atom and HTML apart.
enum FeedSniffer {
    static func kind(_ bytes: UnsafeBufferPointer<UInt8>) -> FeedKind? {
        var i = skipBOMAndSpace(bytes, from: 0)
        guard i < bytes.count else { return nil }
        if bytes[i] == UInt8(ascii: "{") { return .json }
        // UTF-16 XML: the sanitizer transcodes it; peek at an ASCII-only copy here.
        if bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE]) {
            let ascii = bytes.dropFirst(2).filter { $0 != 0 }
            return ascii.withUnsafeBufferPointer { kind($0) }
        }
        // Skip the prolog: declaration, comments, processing instructions, DOCTYPE.
        while i < bytes.count, bytes[i] == UInt8(ascii: "<") {
            guard i + 1 < bytes.count else { return nil }
            let next = bytes[i + 1]
            if next == UInt8(ascii: "?") || next == UInt8(ascii: "!") {
                let terminator: [UInt8] =
                    next == UInt8(ascii: "?") ? Array("?>".utf8)
                    : startsWith(bytes, i, "<!--") ? Array("-->".utf8)
                    : hasInternalSubset(bytes, from: i) ? Array("]>".utf8) : [UInt8(ascii: ">")]
                guard let end = find(terminator, in: bytes, from: i + 2) else { return nil }
                i = skipBOMAndSpace(bytes, from: end + terminator.count)
                continue
            }
            var end = i + 1
            while end < bytes.count, !isNameEnd(bytes[end]) { end += 1 }
            let name = String(decoding: UnsafeBufferPointer(rebasing: bytes[(i + 1)..<end]), as: UTF8.self)
            let local = name.split(separator: ":").last.map(String.init) ?? name
            switch local {
            case "rss", "RDF": return .rss
            case "feed": return .atom
            default: return nil
            }
        }
        return nil
    }

    /// A `<!DOCTYPE x [` whose `[` comes before the first `>`.
    private static func hasInternalSubset(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Bool {
        var i = start
        while i < bytes.count, bytes[i] != UInt8(ascii: ">") {
            if bytes[i] == UInt8(ascii: "[") { return true }
            i += 1
        }
        return false
    }

    static func looksLikeHTML(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let head = String(decoding: bytes.prefix(4096), as: UTF8.self).lowercased()
        return head.contains("<!doctype html") || head.contains("<html")
    }

    private static func skipBOMAndSpace(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var i = start
        if i == 0, bytes.starts(with: [0xEF, 0xBB, 0xBF]) { i = 3 }
        while i < bytes.count, FeedText.isSpace(bytes[i]) { i += 1 }
        return i
    }

    private static func isNameEnd(_ b: UInt8) -> Bool {
        FeedText.isSpace(b) || b == UInt8(ascii: ">") || b == UInt8(ascii: "/")
    }

    private static func startsWith(_ bytes: UnsafeBufferPointer<UInt8>, _ at: Int, _ literal: String) -> Bool {
        let utf8 = Array(literal.utf8)
        return at + utf8.count <= bytes.count && bytes[at..<(at + utf8.count)].elementsEqual(utf8)
    }

    private static func find(_ needle: [UInt8], in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        var i = start
        while i + needle.count <= bytes.count {
            if bytes[i..<(i + needle.count)].elementsEqual(needle) { return i }
            i += 1
        }
        return nil
    }
}
