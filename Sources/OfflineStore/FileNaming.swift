import Foundation

/// Pure functions that turn feed-supplied names (untrusted) into safe file names.
///
/// An item file is `<title> [<content id>].<ext>` (yt-dlp's default template), made safe:
/// - `/` becomes `∕` (U+2215 DIVISION SLASH), which reads like a slash but is not one;
/// - C0/C1 control characters (NUL included), DEL and line/paragraph separators become a
///   space, runs of spaces collapse, and the ends are trimmed; bidirectional overrides and
///   isolates (U+202A–U+202E, U+2066–U+2069) are removed so a name cannot display a fake
///   extension; U+FFFD (what invalid UTF-8 decoded to) is kept;
/// - the result is NFC-normalized, so NFC and NFD spellings of a title give the same bytes
///   (uniqueness then tells the twins apart with a suffix);
/// - a leading `.` gets a `_` prefix (no hidden files, never `.` or `..`);
/// - at most 255 bytes of UTF-8, cut between grapheme clusters; the title is cut first so
///   ` [<id>].<ext>` survives, and the id only when it alone is too long;
/// - collisions get ` (2)`, ` (3)`, … before the extension, still within 255 bytes.
public enum FileNaming {
    /// Linux `NAME_MAX`.
    public static let maxBytes = 255
    /// Room an item's name leaves after its stem for its side files' endings (`-thumb.jpg`,
    /// `.pt-BR.vtt`): a 254-byte name left its thumbnail out of the listing, and with it the
    /// desktop's thumbnail.
    static let sideFileRoom = 10

    /// The safe file name of an item. `collision` 1 is the plain name; 2, 3, … add ` (n)`.
    public static func itemFileName(title: String, contentID: String, ext: String, collision: Int = 1) -> String {
        let safeExt = sanitizeExtension(ext)
        let counter = collision > 1 ? " (\(collision))" : ""
        let tail = counter + "." + safeExt
        let budget = min(maxBytes - tail.utf8.count, maxBytes - sideFileRoom - counter.utf8.count)
        var id = clean(contentID)
        var name = clean(title)
        if name.hasPrefix(".") { name = "_" + name }

        // " [" + id + "]" must fit; cut the id itself only when it cannot.
        let idOverhead = 3 // " [" and "]"
        if id.utf8.count + idOverhead > budget {
            id = truncate(id, toBytes: budget - idOverhead)
        }
        let idPart = "[" + id + "]"
        let titleBudget = budget - idPart.utf8.count - 1
        name = titleBudget > 0 ? truncate(name, toBytes: titleBudget) : ""
        name = trimSpaces(name)
        let core = name.isEmpty ? idPart : name + " " + idPart
        return core + tail
    }

    /// `[<content id>]`, made safe: the name of an item whose lookup failed, which has no title
    /// to name it by (listed in `state/failed/` only, and `ls`).
    public static func contentIDName(_ contentID: String) -> String {
        "[" + truncate(clean(contentID), toBytes: maxBytes - 2) + "]"
    }

    /// A safe folder name for a category (or a source): same rules, no id or extension.
    /// Empty names become `_`. `collision` 2, 3, … append ` (n)`.
    public static func folderName(_ raw: String, collision: Int = 1) -> String {
        let counter = collision > 1 ? " (\(collision))" : ""
        var name = clean(raw)
        if name.isEmpty { name = "_" }
        if name.hasPrefix(".") { name = "_" + name }
        name = trimSpaces(truncate(name, toBytes: maxBytes - counter.utf8.count))
        if name.isEmpty { name = "_" }
        return name + counter
    }

    /// The extension for an item: HLS is always `m3u8`; else from the MIME type; else from the
    /// URL path when short and alphanumeric; else `bin`.
    public static func fileExtension(type: ItemType, mimeType: String?, mediaURL: String?) -> String {
        if type == .hls { return "m3u8" }
        if let mimeType {
            // Most feeds write a bare, lower-case type: it is its own essence.
            if let ext = mimeExtensions[mimeType] { return ext }
            let essence = mimeType.split(separator: ";", maxSplits: 1).first.map {
                $0.trimmingCharacters(in: .whitespaces).lowercased()
            } ?? ""
            if let ext = mimeExtensions[essence] { return ext }
        }
        if let mediaURL, let ext = urlExtension(mediaURL) { return ext }
        return "bin"
    }

    static let mimeExtensions: [String: String] = [
        "video/mp4": "mp4", "video/x-m4v": "m4v", "video/quicktime": "mov", "video/x-matroska": "mkv",
        "video/webm": "webm", "video/mp2t": "ts", "video/mpeg": "mpg", "video/ogg": "ogv",
        "video/x-msvideo": "avi", "video/x-flv": "flv", "video/3gpp": "3gp",
        "audio/mpeg": "mp3", "audio/mp3": "mp3", "audio/mp4": "m4a", "audio/x-m4a": "m4a", "audio/aac": "aac",
        "audio/aacp": "aac", "audio/ogg": "ogg", "audio/opus": "opus", "audio/flac": "flac", "audio/x-flac": "flac",
        "audio/wav": "wav", "audio/x-wav": "wav", "audio/webm": "weba",
        "application/vnd.apple.mpegurl": "m3u8", "application/x-mpegurl": "m3u8", "audio/mpegurl": "m3u8",
        "audio/x-mpegurl": "m3u8", "application/pdf": "pdf", "application/zip": "zip", "application/epub+zip": "epub",
        "image/jpeg": "jpg", "image/png": "png", "image/webp": "webp", "image/gif": "gif",
        "text/vtt": "vtt", "application/x-subrip": "srt", "text/plain": "txt",
    ]

    /// The last path component's extension, lower-cased, if 1–5 ASCII letters/digits.
    static func urlExtension(_ url: String) -> String? {
        var path = Substring(url)
        if let cut = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<cut] }
        guard !path.hasSuffix("/"), let last = path.split(separator: "/").last, let dot = last.lastIndex(of: ".") else {
            return nil
        }
        let ext = last[last.index(after: dot)...]
        guard (1...5).contains(ext.count), ext.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            return nil
        }
        return ext.lowercased()
    }

    /// Extensions come from our table or `urlExtension`, but callers may pass anything.
    static func sanitizeExtension(_ ext: String) -> String {
        // Ours are already lower-case ASCII letters and digits: kept as they are.
        if (1...16).contains(ext.utf8.count),
           ext.utf8.allSatisfy({ ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) }) {
            return ext
        }
        return sanitizeAnyExtension(ext)
    }

    /// `sanitizeExtension` of any string.
    static func sanitizeAnyExtension(_ ext: String) -> String {
        let kept = ext.lowercased().unicodeScalars.filter { $0.isASCII && CharacterSet.alphanumerics.contains($0) }
        let s = String(String.UnicodeScalarView(kept.prefix(16)))
        return s.isEmpty ? "bin" : s
    }

    /// Replaces or removes what must not appear in a name, collapses spaces, NFC-normalizes.
    static func clean(_ raw: String) -> String {
        cleanASCII(raw) ?? cleanScalars(raw)
    }

    /// `clean` of any string, scalar by scalar.
    static func cleanScalars(_ raw: String) -> String {
        var out = String.UnicodeScalarView()
        var lastWasSpace = true // drops leading spaces
        for scalar in raw.unicodeScalars {
            let v = scalar.value
            if v == 0x2F {
                out.append("\u{2215}")
                lastWasSpace = false
            } else if v < 0x20 || (0x7F...0x9F).contains(v) || v == 0x2028 || v == 0x2029 || v == 0x20 {
                if !lastWasSpace { out.append(" ") }
                lastWasSpace = true
            } else if (0x202A...0x202E).contains(v) || (0x2066...0x2069).contains(v) {
                continue
            } else {
                out.append(scalar)
                lastWasSpace = false
            }
        }
        let s = trimSpaces(String(out))
        // ASCII is already NFC; skipping Foundation here keeps 100k-item merges fast.
        if s.utf8.allSatisfy({ $0 < 0x80 }) { return s }
        return s.precomposedStringWithCanonicalMapping
    }

    /// `clean` of an ASCII string, byte by byte (nil for any other): most titles and ids are
    /// ASCII, and this skips building the result scalar by scalar. Its output needs no NFC
    /// (ASCII and `∕` are already NFC).
    static func cleanASCII(_ raw: String) -> String? {
        var raw = raw
        return raw.withUTF8 { bytes -> String? in
            var out: [UInt8] = []
            out.reserveCapacity(bytes.count + 8)
            var lastWasSpace = true // drops leading spaces
            for byte in bytes {
                switch byte {
                case 0x80...: return nil
                case 0x2F:
                    out.append(contentsOf: [0xE2, 0x88, 0x95]) // U+2215 DIVISION SLASH
                    lastWasSpace = false
                case ..<0x20, 0x7F, 0x20:
                    if !lastWasSpace { out.append(0x20) }
                    lastWasSpace = true
                default:
                    out.append(byte)
                    lastWasSpace = false
                }
            }
            if out.last == 0x20 { out.removeLast() } // at most one: runs were collapsed
            return String(decoding: out, as: UTF8.self)
        }
    }

    /// The longest prefix of whole grapheme clusters within `limit` UTF-8 bytes.
    static func truncate(_ s: String, toBytes limit: Int) -> String {
        guard s.utf8.count > limit else { return s }
        guard limit > 0 else { return "" }
        var used = 0
        var end = s.startIndex
        for index in s.indices {
            let next = s.index(after: index)
            let size = s.utf8.distance(from: index, to: next)
            if used + size > limit { break }
            used += size
            end = next
        }
        return String(s[..<end])
    }

    static func trimSpaces(_ s: String) -> String {
        var sub = Substring(s)
        while sub.last == " " { sub = sub.dropLast() }
        while sub.first == " " { sub = sub.dropFirst() }
        return String(sub)
    }
}
