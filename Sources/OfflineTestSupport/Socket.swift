import Glibc

/// Thin wrappers over the POSIX socket calls the origin needs. Every send uses `MSG_NOSIGNAL`
/// so a client that hangs up never raises SIGPIPE in the test process.
enum Socket {
    /// Opens a listening TCP socket on 127.0.0.1 and returns it with the bound port
    /// (useful when `port` is 0).
    static func listen(port: UInt16) throws(TestOriginError) -> (fd: Int32, port: UInt16) {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system("socket") }
        // SO_REUSEADDR lets goOnline() and a restarted origin bind a port whose old
        // connections still sit in TIME_WAIT.
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            let error = TestOriginError.system("bind 127.0.0.1:\(port)")
            Glibc.close(fd)
            throw error
        }
        guard Glibc.listen(fd, 128) == 0 else {
            let error = TestOriginError.system("listen")
            Glibc.close(fd)
            throw error
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    /// Sends the whole buffer; false when the peer is gone or the socket was shut down.
    static func sendAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        guard var pointer = bytes.baseAddress else { return true }
        var remaining = bytes.count
        while remaining > 0 {
            let sent = Glibc.send(fd, pointer, remaining, Int32(MSG_NOSIGNAL))
            if sent < 0 {
                if errno == EINTR { continue }
                return false
            }
            pointer += sent
            remaining -= sent
        }
        return true
    }

    static func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { sendAll(fd, $0) }
    }

    /// Receives into `buffer`; 0 means end of stream, negative an error.
    static func receive(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        while true {
            let received = Glibc.recv(fd, buffer.baseAddress, buffer.count, 0)
            if received < 0 && errno == EINTR { continue }
            return received
        }
    }

    /// Disables Nagle: responses are written as whole buffers, and Nagle plus the client's
    /// delayed ACK would add 40 ms to every small response on a keep-alive connection.
    static func setNoDelay(_ fd: Int32) {
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Makes the next `close` send RST instead of FIN (SO_LINGER with a zero timeout).
    static func setResetOnClose(_ fd: Int32) {
        var value = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &value, socklen_t(MemoryLayout<linger>.size))
    }

    /// Wakes any thread blocked in accept/recv/send on `fd` without closing it, so the
    /// descriptor cannot be reused while that thread still holds it.
    static func shutdown(_ fd: Int32) {
        _ = Glibc.shutdown(fd, Int32(SHUT_RDWR))
    }

    /// Sends FIN, then reads and drops what the client is still sending (up to 1 MiB or
    /// 1 s): closing with unread input makes the kernel send RST, which can destroy the
    /// error answer before the client reads it (the "lingering close" of Apache and nginx).
    static func lingeringClose(_ fd: Int32) {
        _ = Glibc.shutdown(fd, Int32(SHUT_WR))
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var scratch = [UInt8](repeating: 0, count: 64 * 1024)
        var drained = 0
        while drained < 1 << 20 {
            let count = scratch.withUnsafeMutableBytes { receive(fd, into: $0) }
            guard count > 0 else { return }
            drained += count
        }
    }

    static func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }
}
