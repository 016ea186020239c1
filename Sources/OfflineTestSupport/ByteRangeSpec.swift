/// One byte-range-spec of a `Range: bytes=...` header (RFC 9110 §14.1.1), before it is
/// resolved against the content length.
public enum ByteRangeSpec: Sendable, Hashable, CustomStringConvertible {
    /// `bytes=a-b` (inclusive).
    case closed(first: Int64, last: Int64)
    /// `bytes=a-`.
    case from(first: Int64)
    /// `bytes=-n`: the last n bytes.
    case suffix(length: Int64)

    public var description: String {
        switch self {
        case .closed(let first, let last): "\(first)-\(last)"
        case .from(let first): "\(first)-"
        case .suffix(let length): "-\(length)"
        }
    }

    /// The byte offsets this spec selects in content of `length` bytes; `nil` when it is
    /// unsatisfiable (starts at or past the end, or a zero suffix).
    public func resolve(length: Int64) -> Range<Int64>? {
        switch self {
        case .closed(let first, let last):
            guard first < length else { return nil }
            return first..<(min(last, length - 1) + 1)
        case .from(let first):
            guard first < length else { return nil }
            return first..<length
        case .suffix(let count):
            guard count > 0, length > 0 else { return nil }
            return max(0, length - count)..<length
        }
    }
}

/// A parsed `Range` header.
public enum RangeHeader: Sendable, Hashable {
    /// One range: the only form the origin answers with 206.
    case single(ByteRangeSpec)
    /// Several ranges: the origin answers 200 with the full body (RFC 9110 allows ignoring
    /// Range; no multipart/byteranges is ever sent).
    case multiple([ByteRangeSpec])

    /// Parses a header value; `nil` for anything invalid or in another unit, which the origin
    /// then ignores as RFC 9110 §14.2 requires (answering 200).
    public static func parse(_ value: String) -> RangeHeader? {
        let trimmed = value.trimmingSpaces()
        guard trimmed.lowercased().hasPrefix("bytes=") else { return nil }
        var specs: [ByteRangeSpec] = []
        for part in trimmed.dropFirst(6).split(separator: ",", omittingEmptySubsequences: false) {
            guard let spec = parseSpec(String(part).trimmingSpaces()) else { return nil }
            specs.append(spec)
        }
        switch specs.count {
        case 0: return nil
        case 1: return .single(specs[0])
        default: return .multiple(specs)
        }
    }

    private static func parseSpec(_ text: String) -> ByteRangeSpec? {
        guard let dash = text.firstIndex(of: "-") else { return nil }
        let firstText = text[..<dash], lastText = text[text.index(after: dash)...]
        if firstText.isEmpty {
            guard let count = digits(lastText) else { return nil }
            return .suffix(length: count)
        }
        guard let first = digits(firstText) else { return nil }
        if lastText.isEmpty { return .from(first: first) }
        guard let last = digits(lastText), last >= first else { return nil }
        return .closed(first: first, last: last)
    }

    /// Only ASCII digits, no sign, no overflow.
    private static func digits(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        return Int64(text)
    }
}

extension String {
    /// Trims spaces and tabs (HTTP optional whitespace), not other Unicode whitespace.
    func trimmingSpaces() -> String {
        var scalars = Substring(self)
        while let first = scalars.first, first == " " || first == "\t" { scalars.removeFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars.removeLast() }
        return String(scalars)
    }
}
