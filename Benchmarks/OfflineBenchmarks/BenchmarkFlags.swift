/// Walks `--flag value` pairs, handing each to `body`, which returns false for a flag it
/// does not know.
func forEachFlag(in arguments: [String], _ body: (String, String) throws -> Bool) throws {
    var iterator = arguments.makeIterator()
    while let flag = iterator.next() {
        guard let value = iterator.next() else { throw BenchmarkFailure("\(flag) needs a value") }
        guard try body(flag, value) else { throw BenchmarkFailure("unknown option \(flag)") }
    }
}

/// `value` as a count above zero, or a failure naming `flag`.
func positiveCount(_ flag: String, _ value: String) throws -> Int {
    guard let count = Int(value), count > 0 else { throw BenchmarkFailure("\(flag) needs a positive count") }
    return count
}
