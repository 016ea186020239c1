import Foundation

/// One request as the origin saw it, recorded before the first response byte is sent, so a
/// client that has any of the answer can already find its request in the log.
public struct RecordedRequest: Sendable, CustomStringConvertible {
    /// Order of arrival, from 1, across the origin's life (not reset by `clearLog`).
    public var sequence: Int
    /// The connection it arrived on (equal numbers: the same keep-alive connection).
    public var connection: Int
    /// `GET`, `HEAD`, ...
    public var method: String
    /// Path and query as sent, e.g. `/feed.xml?page=2`.
    public var target: String
    /// `target` without the query.
    public var path: String
    /// Header names lowercased; repeated headers joined with ", ".
    public var headers: [String: String]
    /// The parsed `Range` header, `nil` when absent or invalid.
    public var range: RangeHeader?
    /// The status the origin answered (0 when a fault closed the connection without one).
    public var status: Int
    /// The faults applied to this request.
    public var faults: [Fault]
    /// When the request head was complete.
    public var time: Date

    /// Convenience for `headers[name.lowercased()]`.
    public func header(_ name: String) -> String? { headers[name.lowercased()] }

    public var description: String {
        var line = "#\(sequence) c\(connection) \(method) \(target) -> \(status)"
        if let range { line += " range=\(range)" }
        if !faults.isEmpty { line += " faults=\(faults)" }
        return line
    }
}
