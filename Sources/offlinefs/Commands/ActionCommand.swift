import ArgumentParser
import Foundation
import Glibc
import OfflineEngine

/// `action <verb> <file>…`: what a file manager's menu runs on the files selected in a mount.
/// Finds each file's mount (the nearest folder up holding `.control` and `.status`) and writes
/// the command there; no library option needed.
struct ActionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "action", abstract: "Run a command on files selected in a mount (file-manager menus).",
        discussion: """
            What the Dolphin service menu, the Nautilus scripts and the Thunar actions run \
            (offlinefs desktop install adds the last two). Files outside a mount are skipped \
            with a message.
            Example: offlinefs action download ~/Media/sources/acme/*.mp4
            """)

    enum Verb: String, ExpressibleByArgument, CaseIterable {
        case download, pause, resume, evict, lock, unlock
    }

    @Argument(help: ArgumentHelp("What to do: \(Verb.allCases.map(\.rawValue).joined(separator: ", ")) (evict: remove the download).")) var verb: Verb
    @Argument(help: "Files in a mount.") var files: [String]

    func run() throws {
        var failures = 0
        for file in files {
            let absolute = URL(fileURLWithPath: file).standardizedFileURL.path
            guard let (mountpoint, relative) = Self.mount(of: absolute) else {
                printError("\(file): not in an offlinefs mount")
                failures += 1
                continue
            }
            let command: LibraryCommand = switch verb {
            case .download: .download(item: relative, options: DownloadOptions())
            case .pause: .pause(item: relative)
            case .resume: .resume(item: relative)
            case .evict: .evict(item: relative)
            case .lock: .lock(item: relative)
            case .unlock: .unlock(item: relative)
            }
            if let errno = Self.write(ControlLanguage.format(command), to: mountpoint + "/.control") {
                printError("\(file): \(verb.rawValue) refused (\(String(cString: strerror(errno)))); the reason is the last line of \(mountpoint)/.events")
                failures += 1
            }
        }
        if failures > 0 { throw ExitCode(1) }
    }

    private func printError(_ message: String) {
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }

    /// The mount point holding `path` and the path inside it.
    static func mount(of path: String) -> (String, String)? {
        var folder = (path as NSString).deletingLastPathComponent
        while folder != "/" && !folder.isEmpty {
            let manager = FileManager.default
            if manager.fileExists(atPath: folder + "/.control"), manager.fileExists(atPath: folder + "/.status") {
                return (folder, String(path.dropFirst(folder.count + 1)))
            }
            folder = (folder as NSString).deletingLastPathComponent
        }
        return nil
    }

    /// Writes one line in one `write`; the errno of a refusal.
    private static func write(_ line: String, to control: String) -> Int32? {
        let fd = open(control, O_WRONLY | O_APPEND | O_CLOEXEC)
        guard fd >= 0 else { return errno }
        let bytes = Array((line + "\n").utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        let failure = written < 0 ? errno : 0
        let closed = close(fd) < 0 ? errno : 0
        return failure != 0 ? failure : (closed != 0 ? closed : nil)
    }
}
