import Foundation
import Glibc

/// A byte-level HTTP client for tests: sends exactly what the test writes and reports exactly
/// how the connection ended (FIN, RST or a receive timeout), which curl hides.
final class RawHTTPClient {
    enum Ending: Equatable { case open, eof, reset, timeout, error(Int32) }

    struct Response {
        var status: Int
        var headers: [String: String]
        var body: Data
        /// True when the body had its announced length (or ran to a clean EOF without one).
        var complete: Bool
        /// How reading stopped, when it stopped before a complete body.
        var ending: Ending
        func header(_ name: String) -> String? { headers[name.lowercased()] }
    }

    struct Failure: Error, CustomStringConvertible { var description: String }

    let fd: Int32
    private var buffer = Data()
    private(set) var ending = Ending.open

    init(port: UInt16, timeout: Double = 10) throws {
        // `fd` is assigned only once connected: a class init that throws after every stored
        // property is set still runs deinit, which would close the descriptor a second time
        // (possibly someone else's by then).
        let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketFD >= 0 else { throw Failure(description: "socket: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            close(socketFD)
            throw Failure(description: "connect: \(String(cString: strerror(code)))")
        }
        fd = socketFD
        setTimeout(timeout)
    }

    deinit { close(fd) }

    /// Receive timeout: a read waiting longer reports `.timeout`.
    func setTimeout(_ seconds: Double) {
        var value = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - seconds.rounded(.down)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == bytes.count else { throw Failure(description: "send failed") }
    }

    /// Sends a GET/HEAD with `Host` and the given extra header lines.
    func request(_ method: String = "GET", _ target: String, headers: [String] = []) throws {
        let lines = ["\(method) \(target) HTTP/1.1", "Host: 127.0.0.1"] + headers
        try send(lines.joined(separator: "\r\n") + "\r\n\r\n")
    }

    /// Reads one response. The body is read per Content-Length, or to EOF without one, or not
    /// at all for HEAD, 304 and 1xx/204. `bodyTimeout` replaces the receive timeout once the
    /// head is in (a stall test waits long for headers, briefly for the body).
    func readResponse(forHead: Bool = false, bodyTimeout: Double? = nil) throws -> Response {
        guard let headEnd = readUntilHeadEnd() else {
            throw Failure(description: "no response head (ending: \(ending))")
        }
        if let bodyTimeout { setTimeout(bodyTimeout) }
        let headText = String(decoding: buffer[buffer.startIndex..<headEnd], as: UTF8.self)
        buffer.removeSubrange(buffer.startIndex..<headEnd + 4)
        var lines = headText.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
            throw Failure(description: "bad status line in \(headText)")
        }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        if forHead || status == 304 || status == 204 || status < 200 {
            return Response(status: status, headers: headers, body: Data(), complete: true, ending: ending)
        }
        if let lengthText = headers["content-length"], let length = Int(lengthText) {
            while buffer.count < length, fill() {}
            let take = min(length, buffer.count)
            let body = Data(buffer.prefix(take))
            buffer.removeFirst(take)
            return Response(status: status, headers: headers, body: body, complete: take == length, ending: ending)
        }
        while fill() {}
        let body = buffer
        buffer = Data()
        return Response(status: status, headers: headers, body: body, complete: ending == .eof, ending: ending)
    }

    /// Waits for the server to end the connection; returns how it ended (extra bytes are kept).
    func waitForEnd() -> Ending {
        while fill() {}
        return ending
    }

    private func readUntilHeadEnd() -> Int? {
        let marker = Data("\r\n\r\n".utf8)
        while true {
            if let found = buffer.range(of: marker) { return found.lowerBound }
            guard fill() else { return nil }
        }
    }

    /// Reads more bytes; false (with `ending` set) when the stream ended or timed out. A
    /// timeout is not final: a later read may succeed (a stall was released).
    @discardableResult
    private func fill() -> Bool {
        guard ending == .open || ending == .timeout else { return false }
        var chunk = [UInt8](repeating: 0, count: 256 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer.append(contentsOf: chunk[0..<count])
                ending = .open
                return true
            }
            if count < 0 && errno == EINTR { continue }
            if count == 0 {
                ending = .eof
            } else if errno == EAGAIN || errno == EWOULDBLOCK {
                ending = .timeout
            } else {
                ending = errno == ECONNRESET ? .reset : .error(errno)
            }
            return false
        }
    }

    /// Bytes already received or the next ones to arrive; nil when the stream ended.
    func readAvailable() -> Data? {
        if buffer.isEmpty, !fill() { return nil }
        defer { buffer = Data() }
        return buffer
    }

    /// One read with the current timeout: true if it timed out with nothing new.
    func readTimesOut() -> Bool {
        let before = buffer.count
        fill()
        return ending == .timeout && buffer.count == before
    }
}
