import Foundation

/// Checks a JSON document before `JSONDecoder` sees it: nesting depth (so 100 levels
/// fail fast with `tooDeep` instead of recursing), and UTF-8 validity (invalid sequences
/// become U+FFFD instead of failing the whole catalog). One linear pass over the bytes.
enum JSONPreflight {
    /// Returns the bytes to parse: `data` itself, or a repaired copy.
    static func check(_ data: Data, maxDepth: Int) throws(FeedError) -> (data: Data, warnings: [String]) {
        let scan = data.withUnsafeBytes { raw in scanBytes(raw.bindMemory(to: UInt8.self), maxDepth: maxDepth) }
        if scan.tooDeep {
            throw FeedError(.tooDeep, "The JSON catalog is nested more than \(maxDepth) levels deep; offlinefs refuses it.")
        }
        var data = data
        if data.starts(with: [0xEF, 0xBB, 0xBF]) { data = data.dropFirst(3) }
        guard scan.invalidUTF8 > 0 else { return (data, []) }
        let repaired = Data(String(decoding: data, as: UTF8.self).utf8)
        return (repaired, ["\(scan.invalidUTF8) invalid UTF-8 sequences replaced with U+FFFD"])
    }

    private static func scanBytes(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) -> (tooDeep: Bool, invalidUTF8: Int) {
        var depth = 0
        var inString = false
        var invalid = 0
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            if b >= 0x80 {
                if let length = UTF8Check.sequenceLength(bytes, at: i) {
                    i += length
                } else {
                    invalid += 1
                    i += 1
                }
                continue
            }
            if inString {
                if b == UInt8(ascii: "\\") {
                    i += 2
                    continue
                }
                if b == UInt8(ascii: "\"") { inString = false }
            } else {
                switch b {
                case UInt8(ascii: "\""):
                    inString = true
                case UInt8(ascii: "["), UInt8(ascii: "{"):
                    depth += 1
                    if depth > maxDepth { return (true, invalid) }
                case UInt8(ascii: "]"), UInt8(ascii: "}"):
                    depth -= 1
                default:
                    break
                }
            }
            i += 1
        }
        return (false, invalid)
    }
}
