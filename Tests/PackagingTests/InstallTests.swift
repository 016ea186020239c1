import Foundation
import Testing

/// `make install` and the systemd user unit. The tests install what `swift test` already
/// built (`BUILD=no BUILDDIR=…`): a nested `swift build` would wait for the build folder this
/// test run holds.
@Suite("make install / uninstall, the systemd unit", .enabled(if: Tool.exists("make"), "make is not installed (.ci/install-deps installs it)"))
struct InstallTests {
    /// A stand-in for `mount-helpers/mount.offlinefs` while that file does not exist yet.
    private func mountHelper(in folder: URL) throws -> String {
        let real = Tool.repository.appendingPathComponent("mount-helpers/mount.offlinefs")
        if FileManager.default.fileExists(atPath: real.path) { return real.path }
        let stand = folder.appendingPathComponent("mount.offlinefs")
        try "#!/bin/sh\nexit 1\n".write(to: stand, atomically: true, encoding: .utf8)
        return stand.path
    }

    private func make(_ target: String, _ variables: [String: String]) throws -> Tool.Output {
        let fixed = ["BUILD": "no", "BUILDDIR": Tool.buildFolder.path]
        let assignments = fixed.merging(variables) { $1 }.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        return try Tool.run(["make", "--no-print-directory", "-C", Tool.repository.path, target] + assignments)
    }

    private var demoMedia: [String] {
        Tool.files(under: Tool.repository.appendingPathComponent("Sources/offlinefs/Demo/Media"))
    }

    @Test func installPutsEveryFileWhereDebianExpectsIt() throws {
        // Given an empty staging folder
        let stage = try Tool.temporaryFolder("install")
        defer { try? FileManager.default.removeItem(at: stage) }
        let helper = try mountHelper(in: stage)
        let root = stage.appendingPathComponent("root")

        // When the package is installed into it as a Debian package would be
        let install = try make("install", ["DESTDIR": root.path, "PREFIX": "/usr", "MOUNTHELPER": helper])
        #expect(install.status == 0, "\(install.stderr)")

        // Then exactly these files are there
        let expected = [
            "etc/mpv/scripts/offlinefs.lua",
            "sbin/mount.fuse.offlinefs",
            "sbin/mount.offlinefs",
            "usr/bin/offlinefs",
            "usr/lib/systemd/user/offlinefs@.service",
            "usr/share/bash-completion/completions/offlinefs",
            "usr/share/fish/vendor_completions.d/offlinefs.fish",
            "usr/share/kio/servicemenus/offlinefs-actions.desktop",
            "usr/share/man/man1/offlinefs.1",
            "usr/share/man/man5/offlinefs.5",
            "usr/share/man/man7/offlinefs-control.7",
            "usr/share/zsh/vendor-completions/_offlinefs",
        ] + demoMedia.map { "usr/share/offlinefs/demo/" + $0 }
        #expect(Tool.files(under: root) == expected.sorted())

        // And the programs are executable, the rest readable by all and not executable
        func mode(_ path: String) throws -> Int {
            let attributes = try FileManager.default.attributesOfItem(atPath: root.appendingPathComponent(path).path)
            return (attributes[.posixPermissions] as? Int) ?? -1
        }
        #expect(try mode("usr/bin/offlinefs") == 0o755)
        #expect(try mode("sbin/mount.offlinefs") == 0o755)
        for path in expected where !path.contains("bin/") {
            #expect(try mode(path) == 0o644, "\(path)")
        }
        // mount -t fuse.offlinefs runs mount.fuse.offlinefs: the same helper.
        let link = try FileManager.default.destinationOfSymbolicLink(atPath: root.appendingPathComponent("sbin/mount.fuse.offlinefs").path)
        #expect(link == "mount.offlinefs")

        // And the unit runs the installed program; the completions and man pages are the real ones
        let unit = try String(contentsOf: root.appendingPathComponent("usr/lib/systemd/user/offlinefs@.service"), encoding: .utf8)
        #expect(unit.contains("ExecStart=/usr/bin/offlinefs mount %f -f"))
        let bash = try String(contentsOf: root.appendingPathComponent("usr/share/bash-completion/completions/offlinefs"), encoding: .utf8)
        let zsh = try String(contentsOf: root.appendingPathComponent("usr/share/zsh/vendor-completions/_offlinefs"), encoding: .utf8)
        let fish = try String(contentsOf: root.appendingPathComponent("usr/share/fish/vendor_completions.d/offlinefs.fish"), encoding: .utf8)
        #expect(bash.contains("complete") && bash.contains("unmount"))
        #expect(zsh.hasPrefix("#compdef offlinefs") && zsh.contains("unmount"))
        #expect(fish.contains("complete -c 'offlinefs'") && fish.contains("unmount"))
        for (installed, source) in [("man1/offlinefs.1", "offlinefs.1"), ("man5/offlinefs.5", "offlinefs.5"),
                                    ("man7/offlinefs-control.7", "offlinefs-control.7")] {
            let copy = try Data(contentsOf: root.appendingPathComponent("usr/share/man/" + installed))
            #expect(copy == (try Data(contentsOf: Tool.repository.appendingPathComponent("man/" + source))))
        }

        let menu = try String(contentsOf: root.appendingPathComponent("usr/share/kio/servicemenus/offlinefs-actions.desktop"), encoding: .utf8)
        #expect(menu.contains("Exec=/usr/bin/offlinefs action download %F"))
        let script = try Data(contentsOf: root.appendingPathComponent("etc/mpv/scripts/offlinefs.lua"))
        #expect(script == (try Data(contentsOf: Tool.repository.appendingPathComponent("mount-helpers/offlinefs.lua"))))

        // And uninstall removes every file again
        let uninstall = try make("uninstall", ["DESTDIR": root.path, "PREFIX": "/usr"])
        #expect(uninstall.status == 0, "\(uninstall.stderr)")
        #expect(Tool.files(under: root) == [])
    }

    @Test func installedProgramFindsTheDemoMedia() throws {
        // Given an installation under a prefix (no resource bundle beside the program)
        let prefix = try Tool.temporaryFolder("prefix")
        defer { try? FileManager.default.removeItem(at: prefix) }
        let install = try make("install", ["PREFIX": prefix.path, "SBINDIR": prefix.appendingPathComponent("sbin").path,
                                           "MPVSCRIPTDIR": prefix.appendingPathComponent("mpv").path])
        #expect(install.status == 0, "\(install.stderr)")

        // When its demo starts on a mount point that is a file (so it stops before mounting)
        let notAFolder = prefix.appendingPathComponent("file")
        try Data().write(to: notAFolder)
        let demo = try Tool.run([prefix.appendingPathComponent("bin/offlinefs").path, "demo", notAFolder.path],
                                environment: ["OFFLINEFS_DEMO_MEDIA": ""])

        // Then it found the media in share/offlinefs/demo and synced both sources from them
        #expect(demo.stdout.contains("acme: 5 added"), "\(demo.stdout)\(demo.stderr)")
        #expect(demo.stdout.contains("night-owls: 2 added"), "\(demo.stdout)\(demo.stderr)")
        #expect(!demo.stderr.contains("sample media are missing"), "\(demo.stderr)")
    }

    @Test(.enabled(if: Tool.exists("systemd-analyze"), "systemd-analyze is not installed (.ci/install-deps installs systemd)"))
    func systemdUnitVerifies() throws {
        // Given the unit installed under a prefix, so that its ExecStart= names a real program
        let prefix = try Tool.temporaryFolder("unit")
        defer { try? FileManager.default.removeItem(at: prefix) }
        let install = try make("install", ["PREFIX": prefix.path, "SBINDIR": prefix.appendingPathComponent("sbin").path,
                                           "MPVSCRIPTDIR": prefix.appendingPathComponent("mpv").path])
        #expect(install.status == 0, "\(install.stderr)")
        let unit = prefix.appendingPathComponent("lib/systemd/user/offlinefs@.service")

        // When systemd-analyze verifies it as a user unit. Without a user session there is no
        // runtime folder, which the user manager needs even to verify: give it one. --man=no:
        // the Documentation= pages need not be installed on this machine.
        let runtime = prefix.appendingPathComponent("runtime")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
        let verify = try Tool.run(["systemd-analyze", "--user", "--man=no", "verify", unit.path],
                                  environment: ["XDG_RUNTIME_DIR": runtime.path])

        // Then it passes without a word (systemd reports a bad line as a warning, exit 0)
        #expect(verify.status == 0, "\(verify.stderr)")
        #expect(verify.stderr.isEmpty, "\(verify.stderr)")
    }
}
