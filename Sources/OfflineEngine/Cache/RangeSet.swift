/// A set of byte offsets kept as sorted, disjoint, non-touching half-open ranges.
/// A value type: the cache keeps one per item file for "written" and one for "not yet flushed".
struct RangeSet: Sendable, Equatable {
    private(set) var ranges: [Range<Int64>] = []

    init() {}

    init(_ ranges: [Range<Int64>]) {
        for range in ranges { insert(range) }
    }

    var isEmpty: Bool { ranges.isEmpty }
    var byteCount: Int64 { ranges.reduce(0) { $0 + Int64($1.count) } }
    /// One past the last byte held, 0 when empty.
    var upperBound: Int64 { ranges.last?.upperBound ?? 0 }

    /// Adds `range`, merging with neighbours it overlaps or touches.
    mutating func insert(_ range: Range<Int64>) {
        guard !range.isEmpty else { return }
        // Fast path: appending at or after the end (sequential downloads).
        if let last = ranges.last, range.lowerBound >= last.lowerBound {
            if range.lowerBound <= last.upperBound {
                ranges[ranges.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
                return
            }
            ranges.append(range)
            return
        }
        if ranges.isEmpty { ranges.append(range); return }
        var merged = range
        var first = firstIndex(endingAtOrAfter: range.lowerBound)
        let start = first
        while first < ranges.count && ranges[first].lowerBound <= range.upperBound {
            merged = min(merged.lowerBound, ranges[first].lowerBound)..<max(merged.upperBound, ranges[first].upperBound)
            first += 1
        }
        ranges.replaceSubrange(start..<first, with: [merged])
    }

    /// Whether every byte of `range` is held (an empty range always is).
    func contains(_ range: Range<Int64>) -> Bool {
        guard !range.isEmpty else { return true }
        let index = firstIndex(endingAtOrAfter: range.lowerBound + 1)
        guard index < ranges.count else { return false }
        return ranges[index].lowerBound <= range.lowerBound && ranges[index].upperBound >= range.upperBound
    }

    /// The parts of `range` not held, in order.
    func gaps(in range: Range<Int64>) -> [Range<Int64>] {
        guard !range.isEmpty else { return [] }
        var missing: [Range<Int64>] = []
        var cursor = range.lowerBound
        var index = firstIndex(endingAtOrAfter: range.lowerBound + 1)
        while index < ranges.count && ranges[index].lowerBound < range.upperBound {
            let held = ranges[index]
            if held.lowerBound > cursor { missing.append(cursor..<held.lowerBound) }
            cursor = max(cursor, held.upperBound)
            index += 1
        }
        if cursor < range.upperBound { missing.append(cursor..<range.upperBound) }
        return missing
    }

    /// The first held offset at or after `offset`, if any.
    func nextHeld(atOrAfter offset: Int64) -> Int64? {
        let index = firstIndex(endingAtOrAfter: offset + 1)
        guard index < ranges.count else { return nil }
        return max(offset, ranges[index].lowerBound)
    }

    /// Index of the first range whose upper bound is >= `offset`.
    private func firstIndex(endingAtOrAfter offset: Int64) -> Int {
        ranges.partitionPoint { $0.upperBound >= offset }
    }
}
