import ArgumentParser
import OfflineEngine
import OfflineStore

struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ls",
        abstract: "List items, optionally by source, category or state.",
        discussion: "Example: offlinefs ls --source acme --state cached --json")

    @OptionGroup var options: LibraryOptions
    @Option(help: "Only items of this source.") var source: String?
    @Option(help: "Only items in this category (a path such as news/local).") var category: String?
    @Option(help: ArgumentHelp("Only items in this state (\(ItemState.allCases.map(\.rawValue).joined(separator: ", "))).")) var state: String?
    @Flag(help: "Print a JSON array for scripts.") var json = false

    func validate() throws {
        if let state, ItemState(rawValue: state) == nil {
            throw ValidationError("unknown state '\(state)'; states are \(ItemState.allCases.map(\.rawValue).joined(separator: ", "))")
        }
    }

    func run() throws {
        var filter = ItemFilter()
        filter.source = source
        filter.categoryPath = category.map { $0.split(separator: "/").map(String.init) }
        if let parsed = state.flatMap(ItemState.init(rawValue:)) {
            filter.state = parsed
            filter.includeDeleted = parsed == .deleted
        }
        let library = try options.open()
        if let source, try library.store.source(named: source) == nil {
            throw CLIError("no source named '\(source)' (offlinefs source list shows the sources)")
        }
        let items = try library.items(filter)
        if json {
            try printJSON(items)
            return
        }
        var table = TextTable(["STATE", "SIZE", "SOURCE", "FILE", "CATEGORIES"])
        for item in items {
            table.add([
                item.state, item.size.map(formatBytes) ?? "?", item.source, item.fileName,
                item.categories.joined(separator: ", "),
            ])
        }
        print(table.render(), terminator: "")
    }
}
