import Foundation
import OfflineStore
import Testing

@Suite("man pages: lint clean, and in step with the program")
struct ManPageTests {
    static let pages = ["man/offlinefs.1", "man/offlinefs.5", "man/offlinefs-control.7"]

    @Test("groff -ww reports no warning", .enabled(if: Tool.exists("groff"), "groff is not installed (.ci/install-deps installs groff-base)"),
          arguments: pages)
    func groffHasNoWarning(page: String) throws {
        // When groff formats the page with every warning enabled, discarding the output
        let result = try Tool.run(["groff", "-ww", "-z", "-man", "-t", page])

        // Then it says nothing
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty, "\(result.stderr)")
    }

    @Test("mandoc -T lint reports no warning", .enabled(if: Tool.exists("mandoc"), "mandoc is not installed (.ci/install-deps installs it)"),
          arguments: pages)
    func mandocHasNoWarning(page: String) throws {
        // Style notes (long source lines) are not warnings; -W warning keeps only real ones.
        let result = try Tool.run(["mandoc", "-T", "lint", "-W", "warning", page])

        #expect(result.status == 0)
        #expect(result.stdout.isEmpty && result.stderr.isEmpty, "\(result.stdout)\(result.stderr)")
    }

    @Test("offlinefs(1) documents every command the program has")
    func everyCommandIsDocumented() throws {
        // Given the command tree of the built program
        let dump = try Tool.run([Tool.buildFolder.appendingPathComponent("offlinefs").path, "--experimental-dump-help"])
        #expect(dump.status == 0, "\(dump.stderr)")
        let tree = try #require(try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any])
        let command = try #require(tree["command"] as? [String: Any])
        // Hidden commands (e.g. `mount-helper`, run by /sbin/mount.fuse.offlinefs) are not for people.
        let names = try #require(command["subcommands"] as? [[String: Any]])
            .filter { ($0["shouldDisplay"] as? Bool) ?? true }
            .compactMap { $0["commandName"] as? String }
        #expect(names.contains("mount"))

        // Then each one has an entry in COMMANDS (".B name", ".BI \"name " or ".BR name")
        let page = try String(contentsOf: Tool.repository.appendingPathComponent("man/offlinefs.1"), encoding: .utf8)
        let commands = try #require(page.components(separatedBy: ".SH COMMANDS").last?.components(separatedBy: ".SH OPTIONS").first)
        for name in names where name != "help" {
            let documented = [".B \(name)\n", ".BI \"\(name) ", ".BR \(name) ", ".B \(name) "].contains { commands.contains($0) }
            #expect(documented, "offlinefs(1) has no entry for '\(name)' under COMMANDS")
        }
    }

    @Test("offlinefs(5) documents every policy with its default")
    func everyPolicyIsDocumented() throws {
        let page = try String(contentsOf: Tool.repository.appendingPathComponent("man/offlinefs.5"), encoding: .utf8)
        for policy in Policy.allCases {
            let name = policy.name.replacingOccurrences(of: "-", with: "\\-")
            let entry = ".BR \(name) \" (default \" \(policy.defaultValue) )"
            #expect(page.contains(entry), "offlinefs(5) lacks \(entry)")
        }
    }
}
