/// Warnings of one parse, capped so a feed of a million broken items cannot fill memory.
struct FeedWarnings {
    private(set) var list: [String] = []
    private(set) var dropped = 0
    let max: Int

    init(max: Int) { self.max = Swift.max(0, max) }

    mutating func add(_ warning: String) {
        if list.count < max { list.append(warning) } else { dropped += 1 }
    }

    var result: [String] {
        dropped == 0 ? list : list + ["\(dropped) more warnings not shown"]
    }

    /// Quotes feed text for a warning: short, one line, so hostile text cannot forge lines.
    static func quote(_ text: String) -> String {
        var short = text.count > 80 ? String(text.prefix(80)) + "…" : text
        short = String(short.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : Character($0) })
        return "'\(short)'"
    }
}
