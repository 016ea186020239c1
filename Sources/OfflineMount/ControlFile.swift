import Foundation
import Logging
import OfflineEngine
import OfflineFUSE
import Synchronization

// Lock order: `buffers` is a leaf, held only to add bytes and cut lines; commands run after
// it is released.

/// The write side of `.control` (DESIGN §2, HARDENING test 9): each open file has its own
/// buffer, so several writers never mix their lines; a line runs when its newline arrives
/// (split across writes or not), and a last line without a newline runs at `flush` (the
/// writer's `close`). `>` (open with `O_TRUNC`) and `>>` (`O_APPEND`) behave the same: the
/// file has no content to truncate or append to, and write offsets are ignored.
///
/// A line that does not parse, or whose command the performer refuses, fails the write (or
/// the close) that completed it with `EINVAL`, and its reason is appended to `.events` (an
/// `error` event whose details carry the line), where `offlinefs` reads it back. The other
/// lines of the same write still run: a script's bad line does not cancel its neighbours.
/// A line longer than `ControlLanguage.maxLineBytes` fails once and is skipped up to its
/// newline, so a writer cannot make the mount hold unbounded memory.
final class ControlFile: Sendable {
    private struct Buffer {
        var pending: [UInt8] = []
        /// Inside a line that grew too long: bytes are dropped until the next newline.
        var skippingLongLine = false
        /// The lock owner (the writer's file table) of the bytes pending.
        var owner: UInt64 = 0
    }

    private let performer: any CommandPerformer
    private let view: LibraryView
    private let logger: Logger
    /// Runs after commands changed the store, before the write is answered (the tree rebuild
    /// and its notifications).
    private let afterCommands: @Sendable () -> Void
    private let buffers = Mutex<[UInt64: Buffer]>([:])  // protected: open handle → its bytes
    private let nextHandle = Atomic<UInt64>(1)
    static let reference = Array(ControlLanguage.reference.utf8)

    init(performer: any CommandPerformer, view: LibraryView, logger: Logger,
         afterCommands: @escaping @Sendable () -> Void) {
        self.performer = performer
        self.view = view
        self.logger = logger
        self.afterCommands = afterCommands
    }

    func open() -> UInt64 {
        let handle = nextHandle.add(1, ordering: .relaxed).oldValue
        buffers.withLock { $0[handle] = Buffer() }
        return handle
    }

    /// Reading `.control` shows the command reference.
    func read(offset: Int64, size: Int) -> [UInt8] {
        Self.reference.slice(offset: offset, size: size)
    }

    /// Adds `data` to the handle's buffer and runs every line it completes. `owner` is the
    /// writer's lock owner (its file table), which `flush` compares.
    func write(handle: UInt64, data: [UInt8], owner: UInt64) -> Result<Int, Errno> {
        var tooLong = false
        let lines = buffers.withLock { buffers -> [ArraySlice<UInt8>] in
            var buffer = buffers[handle] ?? Buffer()
            defer { buffers[handle] = buffer }
            var lines: [ArraySlice<UInt8>] = []
            var rest = data[...]
            while let newline = rest.firstIndex(of: UInt8(ascii: "\n")) {
                if buffer.skippingLongLine {
                    buffer.skippingLongLine = false
                } else {
                    buffer.pending += rest[..<newline]
                    if buffer.pending.count > ControlLanguage.maxLineBytes {
                        tooLong = true
                    } else {
                        lines.append(buffer.pending[...])
                    }
                }
                buffer.pending.removeAll(keepingCapacity: false)
                rest = rest[(newline + 1)...]
            }
            if !buffer.skippingLongLine { buffer.pending += rest }
            buffer.owner = owner
            if buffer.pending.count > ControlLanguage.maxLineBytes {
                tooLong = true
                buffer.skippingLongLine = true
                buffer.pending.removeAll(keepingCapacity: false)
            }
            return lines
        }
        var failure: Errno?
        if tooLong {
            report(ControlLanguage.ParseError("line too long (more than \(ControlLanguage.maxLineBytes) bytes); skipped"), line: nil)
            failure = .invalidArgument
        }
        if let failed = run(lines) { failure = failure ?? failed }
        return failure.map { .failure($0) } ?? .success(data.count)
    }

    /// A `close`: runs a last line that has no newline, when the writer itself closes.
    /// Every close of a copy of the descriptor flushes too, and a child process the writer
    /// forks (or a `CLOEXEC` at its exec) closes one: that flush comes from another file
    /// table (`owner`) and must not cut the writer's line in two. `nil`: whoever closes.
    func flush(handle: UInt64, owner: UInt64?) -> Result<Void, Errno> {
        let line = buffers.withLock { buffers -> [UInt8]? in
            guard var buffer = buffers[handle], !buffer.pending.isEmpty else { return nil }
            if let owner, buffer.owner != 0, owner != buffer.owner { return nil }
            defer {
                buffer.pending = []
                buffers[handle] = buffer
            }
            return buffer.pending
        }
        guard let line else { return .success(()) }
        return run([line[...]]).map { .failure($0) } ?? .success(())
    }

    /// The last close: a line still waiting (no flush came) runs now; its error has nowhere to go
    /// but `.events`.
    func release(handle: UInt64) {
        _ = flush(handle: handle, owner: nil)
        _ = buffers.withLock { $0.removeValue(forKey: handle) }
    }

    /// Parses and performs `lines` in order; the answer for the write when any failed:
    /// `ENOSPC` when the store's disk is full (its refusal cannot reach `.events` either),
    /// else `EINVAL`.
    private func run(_ lines: [ArraySlice<UInt8>]) -> Errno? {
        var failure: Errno?
        var changed = false
        for line in lines {
            let command: LibraryCommand
            do {
                guard let parsed = try ControlLanguage.parse(line) else { continue }
                command = parsed
            } catch {
                report(error, line: line)
                failure = failure ?? .invalidArgument
                continue
            }
            do {
                let answer = try performer.perform(command)
                changed = true
                logger.debug("control: \(ControlLanguage.format(command)): \(answer)")
            } catch {
                report(error, line: line, item: command.itemReference)
                failure = failure ?? (EngineError.meansDiskFull(error) ? .noSpace : .invalidArgument)
            }
        }
        if changed { afterCommands() }
        return failure
    }

    /// Appends the refusal to `.events` (where the writer reads why its write failed), with
    /// the item it names if known.
    func report(_ error: any Error, line: ArraySlice<UInt8>?, origin: String = "control", item: String? = nil) {
        let text = line.map { String(decoding: $0.prefix(1024), as: UTF8.self) }
        var details: [String: String] = ["origin": origin, "reason": "\(error)"]
        if let text { details["line"] = text }
        let json = (try? JSONSerialization.data(withJSONObject: details, options: [.sortedKeys]))
            .map { String(decoding: $0, as: UTF8.self) }
        // Control characters shown escaped: a NUL cut the message where it stood.
        let shown = text.map { text in
            ": '" + text.prefix(200).unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "\\x" + String(format: "%02x", $0.value) : String($0) }.joined() + "'"
        } ?? ""
        do {
            try view.recordRefusal(message: "\(origin)\(shown): \(error)", details: json, item: item)
        } catch {
            logger.error("control file: cannot record the refusal of\(shown) in the event log: \(error)")
        }
    }
}

extension Array where Element == UInt8 {
    /// `size` bytes from `offset` (fewer at the end): a read of generated content.
    func slice(offset: Int64, size: Int) -> [UInt8] {
        guard offset >= 0, offset < Int64(count), size > 0 else { return [] }
        let start = Int(offset)
        return Array(self[start..<Swift.min(count, start + size)])
    }
}

/// The filesystem's refresh, given to the control file before the filesystem exists.
final class RefreshBox: Sendable {
    private let action = Mutex<(@Sendable () -> Void)?>(nil)  // leaf lock

    func set(_ body: @escaping @Sendable () -> Void) { action.withLock { $0 = body } }

    func run() { action.withLock { $0 }?() }
}
