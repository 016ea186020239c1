import ArgumentParser
import Foundation
import OfflineEngine
import OfflineStore

struct SourceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "source",
        abstract: "Add, list, remove, subscribe or unsubscribe the feeds the library follows.",
        subcommands: [Add.self, List.self, Remove.self, Subscribe.self, Unsubscribe.self]
    )

    /// A name as it is typed in a shell: quoted when it has more than letters, digits, `.`,
    /// `_` and `-`.
    static func typed(_ name: String) -> String {
        name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) } ? name : DesktopPlaces.shellQuoted(name)
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Follow a feed (JSON catalog, RSS/podcast or Atom) under a name.",
            discussion: "Example: offlinefs source add acme https://media.example.com/catalog.json\nThen run 'offlinefs sync acme'.")

        @OptionGroup var options: LibraryOptions
        @Argument(help: "The source's name: its folder under sources/.") var name: String
        @Argument(help: "The feed's http:// or https:// URL.") var url: String

        func run() throws {
            let library = try options.open(creating: true)
            if try options.sendThroughMount([.addSource(name: name, feedURL: url)]) {
                print("added source '\(name)' on the running mount, which syncs it now "
                      + "(offlinefs sync \(SourceCommand.typed(name)) waits for the outcome)")
                return
            }
            let source = try library.addSource(name: name, feedURL: url)
            print("added source '\(source.name)' (\(source.feedURL)); fetch it with: offlinefs sync \(SourceCommand.typed(source.name))")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List sources with their last sync and any sync error.",
            discussion: "Example: offlinefs source list --json")

        @OptionGroup var options: LibraryOptions
        @Flag(help: "Print JSON for scripts.") var json = false

        func run() throws {
            let sources = try options.open().sources()
            if json {
                try printJSON(sources.map(SourceSummary.init))
                return
            }
            var table = TextTable(["NAME", "SUBSCRIBED", "LAST SYNC", "URL", "ERROR"])
            for source in sources {
                table.add([
                    source.name, source.subscribed ? "yes" : "no",
                    source.lastSyncAt.map(formatDate) ?? "never", source.feedURL, source.lastSyncError ?? "",
                ])
            }
            print(table.render(), terminator: "")
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Stop following a source and forget its items.",
            discussion: "Example: offlinefs source remove acme")

        @OptionGroup var options: LibraryOptions
        @Argument(help: "The source's name.") var name: String

        func run() throws {
            if try !options.sendThroughMount([.removeSource(name: name)]) {
                try options.open().removeSource(name: name)
            }
            print("removed source '\(name)'")
        }
    }
}

/// `source subscribe` and `source unsubscribe`: one library command on a named source, sent
/// as every state change is (`CommandRouting`).
protocol SourceToggle: ParsableCommand {
    var options: LibraryOptions { get }
    var name: String { get }
    static func command(source: String) -> LibraryCommand
}

extension SourceToggle {
    func run() throws {
        _ = try CommandRouting.perform([Self.command(source: name)], library: options.open())
    }
}

extension SourceCommand {
    struct Subscribe: SourceToggle {
        static let configuration = CommandConfiguration(
            abstract: "Sync a source again and list all its items (undoes unsubscribe).",
            discussion: "Example: offlinefs source subscribe acme")

        @OptionGroup var options: LibraryOptions
        @Argument(help: "The source's name.") var name: String

        static func command(source: String) -> LibraryCommand { .subscribe(source: source) }
    }

    struct Unsubscribe: SourceToggle {
        static let configuration = CommandConfiguration(
            abstract: "Stop syncing a source; its items not downloaded leave the listing.",
            discussion: "Example: offlinefs source unsubscribe acme")

        @OptionGroup var options: LibraryOptions
        @Argument(help: "The source's name.") var name: String

        static func command(source: String) -> LibraryCommand { .unsubscribe(source: source) }
    }
}

/// A source as `source list --json` prints it: `lastSync` and `error` always (null when there
/// is none, as `ls --json` writes `error`), so a script may index them.
struct SourceSummary: Encodable {
    var name: String
    var title: String?
    var url: String
    var kind: String?
    var subscribed: Bool
    var lastSync: Date?
    var error: String?

    init(_ source: Source) {
        name = source.name
        title = source.title
        url = source.feedURL
        kind = source.kind?.rawValue
        subscribed = source.subscribed
        lastSync = source.lastSyncAt
        error = source.lastSyncError
    }

    private enum CodingKeys: String, CodingKey { case name, title, url, kind, subscribed, lastSync, error }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encodeIfPresent(title, forKey: .title)
        try container.encode(url, forKey: .url)
        try container.encodeIfPresent(kind, forKey: .kind)
        try container.encode(subscribed, forKey: .subscribed)
        try container.encode(lastSync, forKey: .lastSync)
        try container.encode(error, forKey: .error)
    }
}
