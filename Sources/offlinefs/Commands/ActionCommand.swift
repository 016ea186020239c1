import ArgumentParser
import Foundation
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
            // Through symlinks (a desktop link to an item, ~/Videos pointing into the mount):
            // file managers pass paths as browsed.
            let absolute = realpath(file, nil).map { resolved in
                defer { free(resolved) }
                return String(cString: resolved)
            } ?? URL(fileURLWithPath: file).standardizedFileURL.path
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
            do {
                try ControlClient(controlFile: mountpoint + "/.control", store: nil).send(command)
            } catch {
                printError("\(file): \(verb.rawValue) refused: \(error)")
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
}
