#if canImport(Glibc)
import Glibc
#endif
import CFuseShim

/// The one answer a request is owed, typed by what a success carries.
///
/// Each operation receives a `Reply<Value>`; `succeed` (defined per `Value` below and in the
/// files of the value types) or `fail` sends the answer. Only the first call sends anything;
/// later calls do nothing (`isAnswered` tells), so "exactly one reply per request" holds
/// whatever the calling code does, including an interrupt handler racing a completion. A reply may be sent later and from any thread (a read waiting on the network
/// answers from the thread that completes the fetch). A reply dropped without an answer sends
/// `EIO` from its deinit, so the kernel never waits forever on a forgotten request.
public final class Reply<Value>: Sendable {
    /// The request this reply answers: its sender, and interrupt notification.
    public let request: Request
    /// The reply's size limit where the request has one (`size` of read, readdir, getxattr,
    /// listxattr), else 0.
    public let sizeLimit: Int

    init(_ request: Request, sizeLimit: Int = 0) {
        self.request = request
        self.sizeLimit = sizeLimit
    }

    deinit {
        request.finish(.error(.ioError)) { fuse_reply_err($0, EIO) }
    }

    /// Answers with an error.
    public func fail(_ errno: Errno) {
        // 0 would mean success to libfuse (the ops that answer with nothing): never send it here.
        let code = errno.rawValue > 0 ? errno.rawValue : EIO
        request.finish(.error(Errno(rawValue: code))) { fuse_reply_err($0, code) }
    }

    /// Answers with an error converted by `Errno(converting:)` (anything but `Errno` is `EIO`).
    public func fail(_ error: any Error) {
        fail(Errno(converting: error))
    }

    /// `true` once an answer has been sent.
    public var isAnswered: Bool { request.isAnswered }

    /// Sends `answer`: with `body` to the kernel, or as the value to a direct request.
    @discardableResult
    func send(_ answer: @autoclosure () -> Answer, _ body: (fuse_req_t) -> Int32) -> Bool {
        request.finish(answer(), body)
    }
}

extension Reply where Value == Void {
    /// Answers success with no data (`fuse_reply_err(req, 0)`).
    public func succeed() { send(.done) { fuse_reply_err($0, 0) } }

    /// Answers with `result`.
    public func complete(_ result: Result<Void, Errno>) {
        switch result {
        case .success: succeed()
        case .failure(let errno): fail(errno)
        }
    }
}

extension Reply where Value == Entry {
    /// Answers a lookup or a creating request with an entry (a negative one for a cached miss:
    /// only `lookup` may send those).
    public func succeed(_ entry: Entry) {
        var param = entry.param
        send(.entry(entry)) { fuse_reply_entry($0, &param) }
    }

    /// Answers with `result`.
    public func complete(_ result: Result<Entry, Errno>) {
        switch result {
        case .success(let entry): succeed(entry)
        case .failure(let errno): fail(errno)
        }
    }
}

extension Reply where Value == CreatedFile {
    /// Answers `create` with the new entry and the open file (`fuse_reply_create`).
    public func succeed(_ created: CreatedFile) {
        var param = created.entry.param
        var info = created.file.cValue
        send(.created(created)) { fuse_reply_create($0, &param, &info) }
    }
}

extension Reply where Value == FileAttributes {
    /// Answers `getattr`/`setattr`: the attributes and how many seconds the kernel may cache them.
    public func succeed(_ attributes: FileAttributes, timeout: Double) {
        var attr = attributes.stat
        send(.attributes(attributes, timeout: timeout)) { fuse_reply_attr($0, &attr, timeout) }
    }
}

extension Reply where Value == FileInfo {
    /// Answers `open`/`opendir` with the handle and flags to keep (`fuse_reply_open`).
    public func succeed(_ file: FileInfo) {
        var info = file.cValue
        send(.opened(file, passthrough: false)) { fuse_reply_open($0, &info) }
    }

    /// Answers `open` with reads and mmaps of the file passed through to `backing` in the
    /// kernel (`KernelFeatures.passthrough`): none of them reaches the filesystem. `directIO`
    /// and `keepCache` do not apply.
    public func succeed(_ file: FileInfo, passthrough backing: BackingFile) {
        var info = file.cValue
        info.direct_io = 0
        send(.opened(file, passthrough: true)) { cfuse_reply_open_backing($0, &info, backing.id) }
    }
}

extension Reply where Value == String {
    /// Answers `readlink` with the link's target.
    public func succeed(_ target: String) {
        send(.linkTarget(target)) { req in target.withCString { fuse_reply_readlink(req, $0) } }
    }
}

extension Reply where Value == Int {
    /// Answers `write` with the number of bytes written.
    public func succeed(_ count: Int) {
        send(.size(count)) { fuse_reply_write($0, count) }
    }
}

extension Reply where Value == FileSystemStatistics {
    /// Answers `statfs`.
    public func succeed(_ statistics: FileSystemStatistics) {
        var stat = statistics.statvfs
        send(.statistics(statistics)) { fuse_reply_statfs($0, &stat) }
    }
}

extension Reply where Value == [UInt8] {
    /// Answers `getxattr` given the whole value; the binding does the size protocol: a size-0
    /// query gets the length, a buffer too small gets `ERANGE`, else the bytes.
    public func succeed(_ value: [UInt8]) {
        sendSized(value)
    }

    /// Answers `getxattr` with a string value (UTF-8, no terminating NUL, as `setfattr` stores).
    public func succeed(_ value: String) {
        sendSized(Array(value.utf8))
    }
}

extension Reply where Value == [String] {
    /// Answers `listxattr` given every name; the binding joins them NUL-terminated and does the
    /// size protocol like `getxattr`.
    public func succeed(_ names: [String]) {
        var bytes: [UInt8] = []
        for name in names {
            bytes.append(contentsOf: name.utf8)
            bytes.append(0)
        }
        sendSized(bytes)
    }
}

extension Reply {
    /// The xattr size protocol (`getxattr(2)`): 0 asks for the length.
    fileprivate func sendSized(_ bytes: [UInt8]) {
        if sizeLimit == 0 {
            send(.size(bytes.count)) { fuse_reply_xattr($0, bytes.count) }
        } else if bytes.count > sizeLimit {
            fail(.resultOutOfRange)
        } else {
            send(.bytes(bytes)) { req in bytes.withUnsafeBytes { fuse_reply_buf(req, $0.baseAddress, $0.count) } }
        }
    }
}
