/// What a response to a `Range` request really delivers, checked before any byte is kept.
///
/// Servers and proxies get ranges wrong in many ways (a `200` with the whole file, a `206`
/// at another offset, a total that changed, a compressed body); each is told apart here so
/// the caller never writes bytes at the wrong place (owncloud/client#2708, httrack#428).
public enum RangeResponse: Sendable, Equatable {
    /// A `206` for exactly the asked start: `body` covers `[range.start, range.end)`
    /// (the end may be earlier than asked, at end of file); `total` is the file's size.
    case partial(range: ByteRange, total: Int64?)
    /// A `200`: the server ignored the range (or `If-Range` did not match) and sends the
    /// whole file from byte 0. Its length is `total` when known.
    case wholeFile(total: Int64?)
    /// A `416`: the asked start is past the end; `total` is the size the server reports.
    case unsatisfiable(total: Int64?)
}

/// Why a response to a range request cannot be used.
public struct RangeViolation: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

public enum RangeResponseCheck {
    /// Judges the head of a response to a request for `asked` of a file believed to be
    /// `expectedTotal` bytes long (nil when unknown).
    public static func judge(
        asked: ByteRange, expectedTotal: Int64?, status: Int, headers: HTTPHeaders
    ) -> Result<RangeResponse, RangeViolation> {
        if let encoding = headers["content-encoding"]?.lowercased(), !encoding.isEmpty, encoding != "identity" {
            return .failure(RangeViolation("response is \(encoding)-encoded; byte offsets would not match the file"))
        }
        switch status {
        case 200:
            let total = contentLength(headers)
            if let total, let expectedTotal, total != expectedTotal {
                return .failure(RangeViolation("whole-file response of \(total) bytes, expected \(expectedTotal)"))
            }
            return .success(.wholeFile(total: total))
        case 206:
            guard let header = headers["content-range"], let parsed = parseContentRange(header),
                  let first = parsed.first, let last = parsed.last else {
                return .failure(RangeViolation("206 without a valid Content-Range (\(headers["content-range"] ?? "none"))"))
            }
            guard first == asked.start else {
                return .failure(RangeViolation("206 starts at byte \(first), asked \(asked.start)"))
            }
            guard last >= first, last < asked.end else {
                return .failure(RangeViolation("206 ends at byte \(last), asked up to \(asked.end - 1)"))
            }
            if let total = parsed.total {
                if let expectedTotal, total != expectedTotal {
                    return .failure(RangeViolation("file size changed: Content-Range total \(total), expected \(expectedTotal)"))
                }
                guard last < total else {
                    return .failure(RangeViolation("206 range \(first)-\(last) lies past its total \(total)"))
                }
            }
            let range = ByteRange(first, last + 1)
            if let length = contentLength(headers), length != range.count {
                return .failure(RangeViolation("Content-Length \(length) does not match range of \(range.count) bytes"))
            }
            // A short range is only acceptable at the end of the file.
            if range.end < asked.end, let total = parsed.total ?? expectedTotal, range.end != total {
                return .failure(RangeViolation("206 shorter than asked (\(range.count) of \(asked.count) bytes) before end of file"))
            }
            return .success(.partial(range: range, total: parsed.total ?? expectedTotal))
        case 416:
            let total = headers["content-range"].flatMap(parseContentRange)?.total
            return .success(.unsatisfiable(total: total))
        default:
            return .failure(RangeViolation("unexpected status \(status) to a range request"))
        }
    }

    /// Parses `bytes a-b/total`, `bytes a-b/*` and `bytes */total`.
    static func parseContentRange(_ value: String) -> (first: Int64?, last: Int64?, total: Int64?)? {
        let trimmed = value.trimmingCharactersInSpaces()
        guard trimmed.lowercased().hasPrefix("bytes") else { return nil }
        let rest = trimmed.dropFirst(5).trimmingCharactersInSpaces()
        let parts = rest.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let total: Int64?
        if parts[1] == "*" { total = nil } else {
            guard let value = Int64(parts[1]), value >= 0 else { return nil }
            total = value
        }
        if parts[0] == "*" { return (nil, nil, total) }
        let bounds = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = Int64(bounds[0]), let last = Int64(bounds[1]), first >= 0 else {
            return nil
        }
        return (first, last, total)
    }

    private static func contentLength(_ headers: HTTPHeaders) -> Int64? {
        headers["content-length"].flatMap { Int64($0) }
    }
}

extension StringProtocol {
    func trimmingCharactersInSpaces() -> String {
        guard let first = firstIndex(where: { $0 != " " }), let last = lastIndex(where: { $0 != " " }) else { return "" }
        return String(self[first...last])
    }
}
