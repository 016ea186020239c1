import Dispatch
import Foundation
import Glibc
import OfflineHTTP
import OfflineStore
import Synchronization

/// One small range fetch run end to end while the engine starts, before there is work: a
/// responder of its own on the loopback interface answers it, and its bytes go through a
/// staging block to a throwaway cache file that no store records (`DiscardingCacheIndex`).
///
/// Why: the first read of a mount otherwise pays, while its program waits, for everything the
/// transfer path does only once in a process: libcurl's first handle and connection, the
/// Swift runtime's type metadata for the response and staging code, that code's first paging
/// in. ftrace of a first 64 KiB read showed ~0.2 ms between the response's arrival and the
/// answer that a second read in the same process does not pay (docs/reads.md, "The first read
/// of an uncached item").
enum ReadRehearsal {
    /// Bytes the responder sends: one first read's worth.
    static let size = 64 << 10
    /// Rehearsals run in this process (engines of one process may share a cache folder).
    private static let runs = Atomic<Int>(0)
    /// The most the engine's start waits for it.
    static let timeoutMilliseconds: Int32 = 1000

    /// Runs the rehearsal with `makeFile`'s cache file (origin and path given); true when its
    /// bytes arrived. Blocking; on the warm-up thread. Leaves no file behind.
    static func run(in folder: String, makeFile: (FetchOrigin, String) throws -> CachedFile) -> Bool {
        // libcurl would send it to a proxy named in the environment, which cannot reach it.
        let environment = ProcessInfo.processInfo.environment
        guard ["http_proxy", "all_proxy", "ALL_PROXY"].allSatisfy({ environment[$0] == nil }) else { return false }
        guard let responder = LoopbackResponder(body: size) else { return false }
        responder.serveOne(within: timeoutMilliseconds)
        let path = folder + "/.rehearsal-\(getpid())-\(runs.add(1, ordering: .relaxed).newValue)"
        let origin = FetchOrigin(url: "http://127.0.0.1:\(responder.port)/rehearsal", destinationPolicy: .any)
        guard let file = try? makeFile(origin, path) else {
            responder.close()
            return false
        }
        let arrived = DispatchSemaphore(value: 0)
        let outcome = OutcomeBox()
        _ = file.request(0..<Int64(size), readAhead: 0, deadline: .now + .milliseconds(timeoutMilliseconds), mayStream: false,
                         bytes: { _ in outcome.set(.success(())); arrived.signal() },
                         completion: { result in outcome.set(result); arrived.signal() })
        _ = arrived.wait(timeout: .now() + .milliseconds(Int(timeoutMilliseconds)))
        try? file.discard()
        file.dropRecentBlocks()
        unlink(path)
        responder.close()
        if case .success = outcome.get() { return true }
        return false
    }
}

/// A listening socket on 127.0.0.1 that answers one HTTP request with a `206` of `body`
/// zero bytes (the whole file), on a thread of its own, then closes the connection.
private final class LoopbackResponder: @unchecked Sendable {
    let port: UInt16
    private let body: Int
    private let listener: Int32
    private let lock = NSLock()
    private var closed = false

    init?(body: Int) {
        self.body = body
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(fd, generic, length) == 0 && listen(fd, 1) == 0 && getsockname(fd, generic, &length) == 0
            }
        }
        guard bound else {
            Glibc.close(fd)
            return nil
        }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
    }

    /// Serves one request on a new thread, giving up on a step that waits longer than `milliseconds`.
    func serveOne(within milliseconds: Int32) {
        let thread = Thread { [self] in
            guard wait(for: listener, milliseconds) else { return }
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            defer { Glibc.close(connection) }
            guard readRequestHead(connection, milliseconds) else { return }
            let head = "HTTP/1.1 206 Partial Content\r\nContent-Length: \(body)\r\n"
                + "Content-Range: bytes 0-\(body - 1)/\(body)\r\nETag: \"rehearsal\"\r\nConnection: close\r\n\r\n"
            var response = Array(head.utf8)
            response.append(contentsOf: repeatElement(0, count: body))
            var sent = 0
            while sent < response.count {
                let count = response[sent...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return }
                sent += count
            }
        }
        thread.name = "offlinefs.rehearsal"
        thread.start()
    }

    /// Closes the listening socket (a connection being served ends on its own).
    func close() {
        lock.withLock {
            guard !closed else { return }
            closed = true
            shutdown(listener, Int32(SHUT_RDWR))
        }
    }

    deinit { Glibc.close(listener) }

    private func wait(for fd: Int32, _ milliseconds: Int32) -> Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, milliseconds) == 1 && entry.revents & Int16(POLLIN) != 0
    }

    /// Reads up to the blank line that ends a request head (4 KiB at most).
    private func readRequestHead(_ connection: Int32, _ milliseconds: Int32) -> Bool {
        var head: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1024)
        while head.count < 4096 {
            guard wait(for: connection, milliseconds) else { return false }
            let count = chunk.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            head.append(contentsOf: chunk[0..<count])
            let blankLine: [UInt8] = [13, 10, 13, 10]
            if head.count >= 4, (0...(head.count - 4)).contains(where: { head[$0..<($0 + 4)].elementsEqual(blankLine) }) {
                return true
            }
        }
        return false
    }
}

/// A `CacheIndex` that records nothing: for the rehearsal's throwaway file.
struct DiscardingCacheIndex: CacheIndex {
    func load(itemID: Int64, file: CacheFileKey) throws -> StoredCacheFile? { nil }
    func commit(itemID: Int64, file: CacheFileKey, ranges: [Range<Int64>], validator: CacheValidator?) throws {}
    func commit(_ batch: [CacheCommit]) throws -> Set<Int> { [] }
    func reset(itemID: Int64, file: CacheFileKey, validator: CacheValidator?) throws {}
    func warmUp() {}
}
