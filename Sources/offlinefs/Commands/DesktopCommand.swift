import ArgumentParser
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// `desktop install|uninstall`: the per-user file-manager actions (Nautilus scripts, Thunar
/// custom actions) that run `offlinefs action` on the selected files. Dolphin's service menu
/// is system-wide and comes with `make install`.
struct DesktopCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "desktop", abstract: "Add or remove the file-manager actions (Nautilus, Thunar) for this user.",
        discussion: "Example: offlinefs desktop install",
        subcommands: [Install.self, Uninstall.self])

    /// The menu entries: label, `action` verb, Thunar icon.
    static let actions: [(label: String, verb: String, icon: String)] = [
        ("Download", "download", "document-save"),
        ("Pause download", "pause", "media-playback-pause"),
        ("Remove download", "evict", "edit-delete"),
        ("Lock", "lock", "object-locked"),
    ]

    struct Install: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write the Nautilus scripts and Thunar actions (again: they are replaced).",
            discussion: "Example: offlinefs desktop install")

        func run() throws {
            let places = DesktopPlaces()
            let program = DesktopPlaces.executable
            try places.removeNautilusScripts()
            try FileManager.default.createDirectory(atPath: places.nautilusScripts, withIntermediateDirectories: true)
            for action in DesktopCommand.actions {
                let path = places.nautilusScripts + "/" + action.label
                let script = """
                    #!/bin/sh
                    # offlinefs: \(action.label) \(DesktopPlaces.scriptMark)
                    exec \(DesktopPlaces.shellQuoted(program)) action \(action.verb) "$@"

                    """
                try Data(script.utf8).write(to: URL(fileURLWithPath: path))
                chmod(path, 0o755)
            }
            try places.writeThunarActions(program: program)
            print("Nautilus scripts in \(places.nautilusScripts)/ (right-click › Scripts › offlinefs)")
            print("Thunar custom actions in \(places.thunarActions)")
        }
    }

    struct Uninstall: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove what desktop install wrote.", discussion: "Example: offlinefs desktop uninstall")

        func run() throws {
            let places = DesktopPlaces()
            try places.removeNautilusScripts()
            try places.writeThunarActions(program: nil)
            print("removed the offlinefs actions of Nautilus and Thunar")
        }
    }
}

/// Where the per-user actions go, by the XDG base directories.
struct DesktopPlaces {
    let nautilusScripts: String
    let thunarActions: String

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let home = environment["HOME"] ?? NSHomeDirectory()
        let data = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? home + "/.local/share"
        let config = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? home + "/.config"
        nautilusScripts = data + "/nautilus/scripts/offlinefs"
        thunarActions = config + "/Thunar/uca.xml"
    }

    /// This program, as the actions run it.
    static var executable: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? "offlinefs"
    }

    static func shellQuoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// The line that marks a script as ours.
    static let scriptMark = "(written by 'offlinefs desktop install')"

    /// Removes the scripts `desktop install` wrote (they say so in their first lines), and
    /// their folder once nothing else is in it: a script of the user's own there stays.
    func removeNautilusScripts() throws {
        let manager = FileManager.default
        guard let names = try? manager.contentsOfDirectory(atPath: nautilusScripts) else { return }
        for name in names {
            let path = nautilusScripts + "/" + name
            guard let head = manager.contents(atPath: path)?.prefix(512),
                  String(decoding: head, as: UTF8.self).contains(Self.scriptMark) else { continue }
            try manager.removeItem(atPath: path)
        }
        if (try? manager.contentsOfDirectory(atPath: nautilusScripts))?.isEmpty == true {
            try manager.removeItem(atPath: nautilusScripts)
        }
    }

    static let idPrefix = "offlinefs-"

    /// Rewrites Thunar's `uca.xml` with the user's own actions kept and ours (ids starting
    /// `offlinefs-`) replaced, or removed when `program` is nil. Written to a temporary name
    /// and renamed: Thunar may read it at any time.
    func writeThunarActions(program: String?) throws {
        var kept: [XMLElement] = []
        if let data = FileManager.default.contents(atPath: thunarActions) {
            let document = try XMLDocument(data: data)
            for action in document.rootElement()?.elements(forName: "action") ?? [] {
                let id = action.elements(forName: "unique-id").first?.stringValue ?? ""
                if !id.hasPrefix(Self.idPrefix) { kept.append(action.copy() as! XMLElement) }
            }
        } else if program == nil {
            return
        }
        let root = XMLElement(name: "actions")
        for action in kept { root.addChild(action) }
        if let program {
            for action in DesktopCommand.actions {
                let element = XMLElement(name: "action")
                let fields = [("icon", action.icon), ("name", "offlinefs: \(action.label)"),
                              ("unique-id", Self.idPrefix + action.verb),
                              ("command", "\(Self.shellQuoted(program)) action \(action.verb) %F"),
                              ("description", "\(action.label) (offlinefs)"), ("patterns", "*"), ("range", "")]
                for (name, value) in fields { element.addChild(XMLElement(name: name, stringValue: value)) }
                for kind in ["audio-files", "video-files", "other-files", "text-files"] { element.addChild(XMLElement(name: kind)) }
                root.addChild(element)
            }
        }
        let document = XMLDocument(rootElement: root)
        document.version = "1.0"
        document.characterEncoding = "UTF-8"
        let folder = (thunarActions as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let temporary = thunarActions + ".offlinefs-\(getpid())"
        try document.xmlData(options: [.nodePrettyPrint]).write(to: URL(fileURLWithPath: temporary))
        guard rename(temporary, thunarActions) == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: thunarActions])
        }
    }
}
