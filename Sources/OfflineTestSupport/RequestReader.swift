/// Reads request heads from a connection, keeping bytes that arrive after a head (pipelined
/// requests) for the next call.
struct RequestReader {
    enum Head {
        case head([UInt8])
        /// The peer closed (or the socket failed) before a complete head.
        case closed
        /// The head exceeded the limit: the connection answers 431 and closes.
        case tooLarge
    }

    let fd: Int32
    /// Largest accepted head; a client sending more is hostile or broken.
    let limit: Int
    private var buffer: [UInt8] = []
    private var chunk = [UInt8](repeating: 0, count: 16 * 1024)

    init(fd: Int32, limit: Int = 64 * 1024) {
        self.fd = fd
        self.limit = limit
    }

    /// The next head without its terminating empty line. Accepts CRLF and bare LF endings.
    mutating func readHead() -> Head {
        var scanFrom = 0
        while true {
            if let end = Self.headEnd(in: buffer, from: scanFrom) {
                // The limit holds however the bytes arrived (one big read can hold all of it).
                guard end.headLength <= limit else { return .tooLarge }
                let head = Array(buffer[..<end.headLength])
                buffer.removeFirst(end.consumed)
                return .head(head)
            }
            if buffer.count > limit { return .tooLarge }
            scanFrom = max(0, buffer.count - 3)
            guard receiveMore() else { return .closed }
        }
    }

    /// Reads and drops a request body of `count` bytes (the origin ignores request bodies).
    mutating func discardBody(count: Int) -> Bool {
        var remaining = count
        while remaining > 0 {
            if buffer.isEmpty, !receiveMore() { return false }
            let take = min(remaining, buffer.count)
            buffer.removeFirst(take)
            remaining -= take
        }
        return true
    }

    private mutating func receiveMore() -> Bool {
        let received = chunk.withUnsafeMutableBytes { Socket.receive(fd, into: $0) }
        guard received > 0 else { return false }
        buffer.append(contentsOf: chunk[0..<received])
        return true
    }

    /// Finds `\n\r\n` or `\n\n` (skipping empty lines before the request line, which
    /// RFC 9112 §2.2 says to ignore).
    private static func headEnd(in bytes: [UInt8], from start: Int) -> (headLength: Int, consumed: Int)? {
        let lf = UInt8(ascii: "\n"), cr = UInt8(ascii: "\r")
        var leading = 0
        while leading < bytes.count, bytes[leading] == cr || bytes[leading] == lf { leading += 1 }
        var index = max(start, leading)
        while index < bytes.count {
            if bytes[index] == lf {
                if index + 1 < bytes.count, bytes[index + 1] == lf { return (index + 1, index + 2) }
                if index + 2 < bytes.count, bytes[index + 1] == cr, bytes[index + 2] == lf {
                    return (index + 1, index + 3)
                }
            }
            index += 1
        }
        return nil
    }
}
