import Foundation
import OfflineStore

/// `<name>.nfo` beside an item (policy `sidecars nfo`): what Kodi, Jellyfin and Emby read
/// about a file from the catalog, so a media server shows its title, description, date,
/// length and picture without probing the media. Episode details for the items of a podcast
/// or series (an RSS or Atom feed, or audio), movie details otherwise. Pure: the same item and
/// source give the same bytes, so the listing's size is the file's.
public enum ItemSidecar {
    public static func nfo(_ item: Item, source: Source) -> String {
        nfo(item.details, source: source)
    }

    public static func nfo(_ item: ItemDetails, source: Source) -> String {
        let episode = source.kind == .rss || source.kind == .atom || item.type == .audio
        var lines = [#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>"#, episode ? "<episodedetails>" : "<movie>"]
        func add(_ tag: String, _ value: String?, attributes: String = "") {
            guard let value, !value.isEmpty else { return }
            lines.append("  <\(tag)\(attributes)>\(escaped(value))</\(tag)>")
        }
        add("title", item.title)
        if episode { add("showtitle", source.title ?? source.name) }
        add("plot", item.summary)
        if let published = item.publishedAt {
            let day = published.formatted(Date.ISO8601FormatStyle().year().month().day())
            add(episode ? "aired" : "premiered", day)
            if !episode { add("year", String(day.prefix(4))) }
        }
        add("runtime", item.duration.map { String(Int(($0 / 60).rounded(.up))) })
        add("thumb", item.thumbnailURL)
        add("uniqueid", item.contentID, attributes: #" type="offlinefs" default="true""#)
        lines.append(episode ? "</episodedetails>" : "</movie>")
        return lines.joined(separator: "\n") + "\n"
    }

    /// The bytes that mark text to escape or drop besides control characters (0xEF leads
    /// U+FFFE and U+FFFF, which XML forbids).
    private static let specialBytes: Set<UInt8> = [UInt8(ascii: "&"), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "\""),
                                                   UInt8(ascii: "'"), 0xEF]

    /// Text made safe for XML: the five entities, and no character XML 1.0 forbids.
    static func escaped(_ text: String) -> String {
        // Most text has nothing to escape or drop: a scan of its bytes says so, and it is kept as is.
        if !text.utf8.contains(where: { $0 < 0x20 || specialBytes.contains($0) }) { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\t", "\n", "\r": out.unicodeScalars.append(scalar)
            default:
                let v = scalar.value
                if v < 0x20 || (0xFFFE...0xFFFF).contains(v) { continue }
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
