import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing

/// `offlinefs desktop install|uninstall`: the Nautilus scripts and Thunar actions of a user,
/// written where those file managers read them, the user's own Thunar actions kept.
@Suite struct DesktopActionTests {
    @Test func installWritesNautilusScriptsAndThunarActionsAndUninstallRemovesThem() throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("offlinefs-home-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: home) }
        let env = ["HOME": home.path, "XDG_DATA_HOME": "", "XDG_CONFIG_HOME": ""]
        // Given a Thunar configuration with an action of the user's own
        let thunar = home.appendingPathComponent(".config/Thunar")
        try FileManager.default.createDirectory(at: thunar, withIntermediateDirectories: true)
        try Data("""
            <?xml version="1.0" encoding="UTF-8"?>
            <actions>
            <action><icon>utilities-terminal</icon><name>Open Terminal Here</name><unique-id>1234-1</unique-id>
            <command>exo-open --working-directory %f --launch TerminalEmulator</command><description></description>
            <patterns>*</patterns><startup-notify/><directories/></action>
            </actions>
            """.utf8).write(to: thunar.appendingPathComponent("uca.xml"))
        let cli = CLIRunner()
        // When the actions are installed, twice
        for _ in 0..<2 {
            let install = try cli.run(["desktop", "install"], environment: env)
            #expect(install.status == 0, "\(install.stderr)")
        }
        // Then Nautilus has four executable scripts running this program's `action`
        let scripts = home.appendingPathComponent(".local/share/nautilus/scripts/offlinefs")
        let names = try FileManager.default.contentsOfDirectory(atPath: scripts.path).sorted()
        #expect(names == ["Download", "Lock", "Pause download", "Remove download"])
        for name in names {
            let path = scripts.appendingPathComponent(name).path
            #expect(FileManager.default.isExecutableFile(atPath: path))
        }
        let download = try String(contentsOf: scripts.appendingPathComponent("Download"), encoding: .utf8)
        #expect(download.contains("'\(CLIRunner.executable.path)' action download \"$@\""), "\(download)")
        // And Thunar's file parses, with the user's action kept and ours once each
        let document = try XMLDocument(contentsOf: thunar.appendingPathComponent("uca.xml"))
        let ids = (document.rootElement()?.elements(forName: "action") ?? []).compactMap {
            $0.elements(forName: "unique-id").first?.stringValue
        }
        #expect(ids == ["1234-1", "offlinefs-download", "offlinefs-pause", "offlinefs-evict", "offlinefs-lock"])
        let command = try #require(try document.nodes(forXPath: "//action[unique-id='offlinefs-evict']/command").first?.stringValue)
        #expect(command == "'\(CLIRunner.executable.path)' action evict %F")

        // When they are uninstalled, a script of the user's own beside them
        let own = scripts.appendingPathComponent("My own")
        try Data("#!/bin/sh\necho mine\n".utf8).write(to: own)
        let uninstall = try cli.run(["desktop", "uninstall"], environment: env)
        #expect(uninstall.status == 0, "\(uninstall.stderr)")
        // Then ours are gone, the user's script is kept, and only the user's Thunar action is left
        #expect(try FileManager.default.contentsOfDirectory(atPath: scripts.path) == ["My own"])
        try FileManager.default.removeItem(at: own)
        #expect(try cli.run(["desktop", "uninstall"], environment: env).status == 0)
        #expect(!FileManager.default.fileExists(atPath: scripts.path), "an emptied folder goes")
        let after = try XMLDocument(contentsOf: thunar.appendingPathComponent("uca.xml"))
        #expect((after.rootElement()?.elements(forName: "action") ?? []).count == 1)
    }

    @Test func actionOutsideAMountSaysSoAndFails() throws {
        let cli = CLIRunner()
        let run = try cli.run(["action", "download", "/tmp/not-a-mount.mp4"])
        #expect(run.status == 1)
        #expect(run.stderr.contains("/tmp/not-a-mount.mp4: not in an offlinefs mount"))
    }
}
