import Foundation
import Testing

/// `offlinefs --help` and every command's help, compared with the text checked in under
/// HelpSnapshots/ (one file per command). A change to the CLI's words shows up as a diff in
/// review. To accept new help text: `OFFLINEFS_UPDATE_SNAPSHOTS=1 swift test --filter HelpSnapshotTests`.
@Suite("Help text, by snapshot")
struct HelpSnapshotTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("HelpSnapshots")
    static let updating = ProcessInfo.processInfo.environment["OFFLINEFS_UPDATE_SNAPSHOTS"] == "1"

    /// Every visible command path of the built program (`source add`, `ls`, …), from its own
    /// description of itself, so a new command cannot go without a snapshot.
    static func commandPaths() throws -> [[String]] {
        let dump = try CLIRunner().run("--experimental-dump-help")
        guard let tree = try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any],
              let root = tree["command"] as? [String: Any] else { return [] }
        var paths: [[String]] = [[]]
        func walk(_ command: [String: Any], _ path: [String]) {
            for sub in command["subcommands"] as? [[String: Any]] ?? [] {
                guard (sub["shouldDisplay"] as? Bool) ?? true, let name = sub["commandName"] as? String,
                      name != "help" else { continue }
                paths.append(path + [name])
                walk(sub, path + [name])
            }
        }
        walk(root, [])
        return paths
    }

    @Test func everyCommandsHelpMatchesItsSnapshot() throws {
        let paths = try Self.commandPaths()
        #expect(paths.count > 15, "the command tree was read")
        for path in paths {
            let output = try CLIRunner().run(path + ["--help"], environment: ["COLUMNS": "100"])
            #expect(output.status == 0, "\(path): \(output.stderr)")
            let name = (["offlinefs"] + path).joined(separator: "-") + ".txt"
            let file = Self.folder.appendingPathComponent(name)
            if Self.updating {
                try FileManager.default.createDirectory(at: Self.folder, withIntermediateDirectories: true)
                try Data(output.stdout.utf8).write(to: file)
                continue
            }
            let expected = try? String(contentsOf: file, encoding: .utf8)
            #expect(expected != nil, "no snapshot \(name): run with OFFLINEFS_UPDATE_SNAPSHOTS=1 and review it")
            #expect(output.stdout == expected, "help of '\(path.joined(separator: " "))' changed")
        }
    }

    @Test func everyCommandHasAnExampleInItsHelp() throws {
        for path in try Self.commandPaths() where !path.isEmpty {
            let output = try CLIRunner().run(path + ["--help"], environment: ["COLUMNS": "100"])
            let isGroup = path == ["source"]
            #expect(isGroup || output.stdout.contains("Example"), "'\(path.joined(separator: " "))' --help has no example")
        }
    }
}
