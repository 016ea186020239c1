import Foundation

/// Makes untrusted XML bytes safe and digestible for Foundation's `XMLParser` (libxml2),
/// in one linear pass (HARDENING "Feeds"):
///
/// - a `<!DOCTYPE>` with an internal subset, or any `<!ENTITY>`, is refused
///   (`forbiddenDoctype`): entity expansion ("billion laughs") costs minutes of CPU, and
///   external entities can name local files; a plain `<!DOCTYPE rss …>` is removed;
/// - undeclared HTML entities (`&nbsp;`) become numeric references, unknown names U+FFFD,
///   and a bare `&` becomes `&amp;`, because libxml2 stops the whole parse on them;
/// - in UTF-8 documents, invalid byte sequences become U+FFFD; control characters XML
///   forbids become spaces;
/// - UTF-16 documents are transcoded to UTF-8.
///
/// Text inside comments and CDATA sections is left alone except for the byte-level repairs.
struct XMLSanitizer {
    struct Output {
        var data: Data
        var warnings: [String]
    }

    static func sanitize(_ input: Data, deadline: ContinuousClock.Instant) throws(FeedError) -> Output {
        var data = input
        var transcoded = false
        if data.starts(with: [0xFE, 0xFF]) || data.starts(with: [0xFF, 0xFE]) {
            guard let text = String(data: data, encoding: .utf16) else {
                throw FeedError(.malformed, "The feed starts with a UTF-16 byte order mark but is not valid UTF-16.")
            }
            data = Data(text.utf8)
            transcoded = true
        }
        var sanitizer = XMLSanitizer(deadline: deadline)
        // withUnsafeBytes does not carry typed throws through; pass the error out as a value.
        let result = data.withUnsafeBytes { raw -> Result<[UInt8]?, FeedError> in
            do throws(FeedError) {
                return .success(try sanitizer.run(raw.bindMemory(to: UInt8.self), dropDeclaration: transcoded))
            } catch {
                return .failure(error)
            }
        }
        let repaired = try result.get()
        return Output(data: repaired.map { Data($0) } ?? data, warnings: sanitizer.warnings())
    }

    private let deadline: ContinuousClock.Instant
    private var out: [UInt8] = []
    private var changed = false
    private var copiedUpTo = 0
    private var entitiesReplaced = 0
    private var unknownEntities: [String] = []
    private var bareAmpersands = 0
    private var invalidUTF8 = 0
    private var controlCharacters = 0

    private init(deadline: ContinuousClock.Instant) { self.deadline = deadline }

    private func warnings() -> [String] {
        var list: [String] = []
        if entitiesReplaced > 0 { list.append("\(entitiesReplaced) undeclared HTML entities replaced") }
        if !unknownEntities.isEmpty {
            list.append("unknown entities replaced with U+FFFD: " + unknownEntities.map { "&\($0);" }.joined(separator: " "))
        }
        if bareAmpersands > 0 { list.append("\(bareAmpersands) bare '&' characters escaped") }
        if invalidUTF8 > 0 { list.append("\(invalidUTF8) invalid UTF-8 sequences replaced with U+FFFD") }
        if controlCharacters > 0 { list.append("\(controlCharacters) control characters replaced with spaces") }
        return list
    }

    // MARK: The scan

    private enum Section { case markup, comment, cdata, instruction }

    private mutating func run(_ bytes: UnsafeBufferPointer<UInt8>, dropDeclaration: Bool) throws(FeedError) -> [UInt8]? {
        let utf8 = dropDeclaration || Self.declaresUTF8(bytes)
        var i = 0
        var section = Section.markup
        var nextClockCheck = 1 << 22
        if dropDeclaration, bytes.starts(with: Array("<?xml".utf8)), let end = Self.find(Array("?>".utf8), in: bytes, from: 0) {
            replace(bytes, 0..<(end + 2), with: [])
            i = end + 2
        }
        while i < bytes.count {
            if i >= nextClockCheck {
                nextClockCheck += 1 << 22
                if ContinuousClock.now >= deadline { throw FeedParser.deadlineError }
            }
            let byte = bytes[i]
            if byte >= 0x80 {
                i = utf8 ? repairUTF8(bytes, at: i) : i + 1
                continue
            }
            if byte < 0x20 && byte != 0x09 && byte != 0x0A && byte != 0x0D {
                controlCharacters += 1
                replace(bytes, i..<(i + 1), with: [0x20])
                i += 1
                continue
            }
            switch section {
            case .comment:
                if byte == UInt8(ascii: "-"), Self.matches(bytes, at: i, "-->") { section = .markup; i += 3 } else { i += 1 }
            case .cdata:
                if byte == UInt8(ascii: "]"), Self.matches(bytes, at: i, "]]>") { section = .markup; i += 3 } else { i += 1 }
            case .instruction:
                if byte == UInt8(ascii: "?"), Self.matches(bytes, at: i, "?>") { section = .markup; i += 2 } else { i += 1 }
            case .markup:
                if byte == UInt8(ascii: "&") {
                    i = entity(bytes, at: i)
                } else if byte == UInt8(ascii: "<") {
                    if Self.matches(bytes, at: i, "<!--") {
                        section = .comment
                        i += 4
                    } else if Self.matches(bytes, at: i, "<![CDATA[") {
                        section = .cdata
                        i += 9
                    } else if Self.matches(bytes, at: i, "<?") {
                        section = .instruction
                        i += 2
                    } else if Self.matches(bytes, at: i, "<!DOCTYPE", caseInsensitive: true) {
                        i = try doctype(bytes, at: i)
                    } else if Self.matches(bytes, at: i, "<!ENTITY", caseInsensitive: true) {
                        throw Self.entityError
                    } else {
                        i += 1
                    }
                } else {
                    i += 1
                }
            }
        }
        guard changed else { return nil }
        out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[copiedUpTo...]))
        return out
    }

    /// Replaces `range` of the input with `replacement` in the output, copying what lies
    /// between edits in bulk (the output exists only once something changes).
    private mutating func replace(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, with replacement: [UInt8]) {
        if !changed {
            changed = true
            out.reserveCapacity(bytes.count + 4096)
        }
        out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[copiedUpTo..<range.lowerBound]))
        out.append(contentsOf: replacement)
        copiedUpTo = range.upperBound
    }

    private static let entityError = FeedError(
        .forbiddenDoctype,
        "The feed declares XML entities (<!ENTITY …>); offlinefs refuses them because entity expansion can exhaust memory and external entities can read local files.")

    /// Checks a `<!DOCTYPE name [SYSTEM|PUBLIC "…" ["…"]]>` and removes it; refuses an
    /// internal subset. Returns the index after it.
    private mutating func doctype(_ bytes: UnsafeBufferPointer<UInt8>, at start: Int) throws(FeedError) -> Int {
        var i = start + 9
        var quote: UInt8? = nil
        while i < bytes.count {
            let b = bytes[i]
            if let q = quote {
                if b == q { quote = nil }
            } else if b == UInt8(ascii: "\"") || b == UInt8(ascii: "'") {
                quote = b
            } else if b == UInt8(ascii: "[") {
                throw FeedError(
                    .forbiddenDoctype,
                    "The feed's <!DOCTYPE> has an internal subset ([…]); offlinefs refuses DTD declarations in feeds because entity expansion can exhaust memory.")
            } else if b == UInt8(ascii: ">") {
                replace(bytes, start..<(i + 1), with: [])
                return i + 1
            }
            i += 1
        }
        throw FeedError(.malformed, "The feed's <!DOCTYPE> is not closed; the document is truncated or not XML.")
    }

    /// Handles `&…` in markup and text. Returns the index after what it consumed.
    private mutating func entity(_ bytes: UnsafeBufferPointer<UInt8>, at start: Int) -> Int {
        var end = start + 1
        let limit = min(bytes.count, start + 40)
        while end < limit, bytes[end] != UInt8(ascii: ";"), Self.isNameByte(bytes[end]) || bytes[end] == UInt8(ascii: "#") {
            end += 1
        }
        guard end < limit, bytes[end] == UInt8(ascii: ";"), end > start + 1 else {
            bareAmpersands += 1
            replace(bytes, start..<(start + 1), with: Array("&amp;".utf8))
            return start + 1
        }
        let name = UnsafeBufferPointer(rebasing: bytes[(start + 1)..<end])
        if name[0] == UInt8(ascii: "#") {
            if let value = Self.numericReference(name), Self.isXMLChar(value) { return end + 1 }
            replace(bytes, start..<(end + 1), with: Array("&#xFFFD;".utf8))
            return end + 1
        }
        switch String(decoding: name, as: UTF8.self) {
        case "amp", "lt", "gt", "quot", "apos":
            return end + 1
        case let html:
            if let value = HTMLEntities.codePoint(html) {
                entitiesReplaced += 1
                replace(bytes, start..<(end + 1), with: Array("&#\(value);".utf8))
            } else {
                if unknownEntities.count < 10, !unknownEntities.contains(html) { unknownEntities.append(html) }
                replace(bytes, start..<(end + 1), with: Array("&#xFFFD;".utf8))
            }
            return end + 1
        }
    }

    /// Keeps a valid UTF-8 sequence at `start`, or replaces its first byte with U+FFFD.
    /// Returns the index after it.
    private mutating func repairUTF8(_ bytes: UnsafeBufferPointer<UInt8>, at start: Int) -> Int {
        if let length = UTF8Check.sequenceLength(bytes, at: start, xmlCharacters: true) { return start + length }
        invalidUTF8 += 1
        replace(bytes, start..<(start + 1), with: [0xEF, 0xBF, 0xBD])
        return start + 1
    }

    // MARK: Byte helpers

    /// True unless the XML declaration names an encoding other than UTF-8.
    private static func declaresUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var start = 0
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { start = 3 }
        guard matches(bytes, at: start, "<?xml"), let end = find(Array("?>".utf8), in: bytes, from: start) else { return true }
        let declaration = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self).lowercased()
        guard let range = declaration.range(of: "encoding") else { return true }
        let rest = declaration[range.upperBound...].drop { $0 == " " || $0 == "=" || $0 == "\"" || $0 == "'" }
        return rest.hasPrefix("utf-8") || rest.hasPrefix("utf8")
    }

    private static func matches(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int, _ literal: StaticString, caseInsensitive: Bool = false) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        let pointer = literal.utf8Start
        for k in 0..<count {
            var a = bytes[index + k], b = pointer[k]
            if caseInsensitive { a |= a >= 0x41 && a <= 0x5A ? 0x20 : 0; b |= b >= 0x41 && b <= 0x5A ? 0x20 : 0 }
            if a != b { return false }
        }
        return true
    }

    private static func find(_ needle: [UInt8], in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard needle.count <= bytes.count else { return nil }
        var i = start
        while i + needle.count <= bytes.count {
            if bytes[i] == needle[0], bytes[i..<(i + needle.count)].elementsEqual(needle) { return i }
            i += 1
        }
        return nil
    }

    private static func isNameByte(_ b: UInt8) -> Bool {
        (b | 0x20) >= 0x61 && (b | 0x20) <= 0x7A || (b >= 0x30 && b <= 0x39) || b == UInt8(ascii: "_")
            || b == UInt8(ascii: "-") || b == UInt8(ascii: ".") || b == UInt8(ascii: ":")
    }

    /// `#233` or `#xE9` → the value; nil if not a number or absurdly large.
    private static func numericReference(_ name: UnsafeBufferPointer<UInt8>) -> UInt32? {
        let hex = name.count > 1 && (name[1] | 0x20) == UInt8(ascii: "x")
        let digits = name.dropFirst(hex ? 2 : 1)
        guard !digits.isEmpty, digits.count <= 8 else { return nil }
        return UInt32(String(decoding: digits, as: UTF8.self), radix: hex ? 16 : 10)
    }

    private static func isXMLChar(_ value: UInt32) -> Bool {
        value == 0x9 || value == 0xA || value == 0xD || (0x20...0xD7FF).contains(value)
            || (0xE000...0xFFFD).contains(value) || (0x10000...0x10FFFF).contains(value)
    }
}
