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
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) }
        }
        var output = ""
        for row in rows {
            let cells = row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[index] - cell.count)
            }
            output += cells.joined(separator: "  ").trimmingTrailingSpaces() + "\n"
        }
        return output
    }
}

private extension String {
    func trimmingTrailingSpaces() -> String {
        var copy = self
        while copy.last == " " { copy.removeLast() }
        return copy
    }
}
