/// Left-aligned columns for people; scripts use `--json`.
struct TextTable {
    private var rows: [[String]]

    init(_ header: [String]) {
        rows = [header]
    }

    mutating func add(_ row: [String]) {
        rows.append(row)
    }

    func render() -> String {
        let columns = rows.map(\.count).max() ?? 0
        var widths = [Int](repeating: 0, count: columns)
        for row in rows {
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.terminalWidth) }
        }
        var output = ""
        for row in rows {
            let cells = row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[index] - cell.terminalWidth)
            }
            output += cells.joined(separator: "  ").trimmingTrailingSpaces() + "\n"
        }
        return output
    }
}

extension String {
    /// Columns a terminal gives the text: two for East Asian wide and fullwidth characters
    /// and emoji, none for combining marks and zero-width characters, one for the rest.
    var terminalWidth: Int {
        reduce(0) { $0 + $1.terminalWidth }
    }

    fileprivate func trimmingTrailingSpaces() -> String {
        var copy = self
        while copy.last == " " { copy.removeLast() }
        return copy
    }
}

extension Character {
    var terminalWidth: Int {
        guard let first = unicodeScalars.first else { return 0 }
        if unicodeScalars.contains(where: { $0.properties.isEmojiPresentation || $0 == "\u{FE0F}" }) { return 2 }
        if first.isWide { return 2 }
        if unicodeScalars.allSatisfy(\.isZeroWidth) { return 0 }
        return 1
    }
}

extension Unicode.Scalar {
    /// East Asian Wide (W) and Fullwidth (F), by the blocks that hold them (UAX #11).
    fileprivate var isWide: Bool {
        switch value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
             0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19,
             0xFE30...0xFE6F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x1B000...0x1B2FF,
             0x20000...0x2FFFD, 0x30000...0x3FFFD:
            true
        default:
            false
        }
    }

    fileprivate var isZeroWidth: Bool {
        switch properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: true
        default: value == 0x200B
        }
    }
}
