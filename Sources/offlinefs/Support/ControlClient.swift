import OfflineFUSE
import Foundation
import OfflineEngine
import OfflineStore

/// The mount serving a library, found from the engine lock (pid and mount point) and the
/// kernel's mount table: never a `stat` of the mount point, which hangs on a dead mount.
enum RunningMount {
    /// `<mount point>/.control` when a live engine holds the library's lock and its mount
    /// point is mounted; else `nil` (commands then change the store directly).
    static func controlFile(for library: URL) -> String? {
        guard let holder = EngineLock.holder(folder: library), let mountpoint = holder.mountpoint else { return nil }
        guard kill(holder.pid, 0) == 0 || errno == EPERM else { return nil }  // a stale lock file
        guard MountTable.isMounted(mountpoint) else { return nil }
        return mountpoint + "/.control"
    }
}

/// Sends commands to a running mount through its control file: one language, one parser,
/// one performer (DESIGN §6). A refusal (EINVAL) is reported with the reason the mount wrote
/// to `.events`.
struct ControlClient {
    let controlFile: String
    /// Where the mount's reasons are read: the library's store, or (nil: a file manager's
    /// action, which knows only the mount) the `.events` file beside `controlFile`.
    let store: LibraryStore?

    func send(_ command: LibraryCommand) throws {
        let line = ControlLanguage.format(command)
        let before = (try? store?.lastEventSeq()) ?? 0
        let fd = open(controlFile, O_WRONLY | O_APPEND | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == EROFS {
                let mountpoint = (controlFile as NSString).deletingLastPathComponent
                throw CLIError("the library is mounted read-only on \(mountpoint) (-o ro): 'offlinefs unmount \(mountpoint)', then mount it without ro to change it")
            }
            throw CLIError("cannot open \(controlFile): \(String(cString: strerror(errno)))")
        }
        let bytes = Array((line + "\n").utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let writeError = written < 0 ? errno : 0
        let closeError = close(fd) < 0 ? errno : 0
        let failure = writeError != 0 ? writeError : closeError
        guard failure != 0 else { return }
        guard failure == EINVAL else {
            throw CLIError("writing '\(line)' to \(controlFile): \(String(cString: strerror(failure)))")
        }
        throw CLIError(reason(for: line, after: before) ?? "the mount refused '\(line)' (see .events)")
    }

    /// The reason the mount logged for `line` (an `error` event whose details carry the line).
    private func reason(for line: String, after seq: Int64) -> String? {
        guard let store else { return reasonInEventsFile(for: line) }
        let events = (try? store.events(after: seq, limit: 10_000)) ?? []
        for event in events.reversed() where event.kind == .error {
            guard let details = event.details,
                  let object = try? JSONSerialization.jsonObject(with: Data(details.utf8)) as? [String: Any],
                  object["line"] as? String == line, let reason = object["reason"] as? String else { continue }
            return reason
        }
        return nil
    }

    /// The same, from the last lines of the mount's `.events` (the refusal was just appended).
    private func reasonInEventsFile(for line: String) -> String? {
        let path = (controlFile as NSString).deletingLastPathComponent + "/.events"
        guard let file = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? file.close() }
        let end = (try? file.seekToEnd()) ?? 0
        try? file.seek(toOffset: end > 65_536 ? end - 65_536 : 0)
        let tail = (try? file.readToEnd()) ?? Data()
        for text in tail.split(separator: UInt8(ascii: "\n")).reversed() {
            guard let event = try? JSONSerialization.jsonObject(with: Data(text)) as? [String: Any],
                  event["kind"] as? String == "error", let details = event["details"] as? [String: Any],
                  details["line"] as? String == line, let reason = details["reason"] as? String else { continue }
            return reason
        }
        return nil
    }
}

extension LibraryOptions {
    /// Sends `commands` to the library's running mount and returns `true`, or returns `false`
    /// when the library is not mounted (the caller then acts on the store).
    func sendThroughMount(_ commands: [LibraryCommand]) throws -> Bool {
        guard let control = RunningMount.controlFile(for: folder) else { return false }
        let library = try open()
        let client = ControlClient(controlFile: control, store: library.store)
        // Each is sent, refused or not, as without a mount.
        var failures: [String] = []
        for command in commands {
            do { try client.send(command) } catch { failures.append("\(error)") }
        }
        if !failures.isEmpty { throw CLIError(failures.joined(separator: "; ")) }
        return true
    }
}
