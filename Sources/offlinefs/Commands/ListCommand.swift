import Foundation
import ArgumentParser
import OfflineEngine
import OfflineStore

struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ls",
        abstract: "List items, optionally by source, category or state.",
        discussion: """
            Example: offlinefs ls --source acme --state downloading,queued --sort size
            --recent lists what recent/ shows in the mount: items downloaded in the last
            recent-days days (a policy, 7 by default), newest first. --unwatched lists what
            unwatched/ shows: cached items not marked watched.
            """)

    @OptionGroup var options: LibraryOptions
    @Option(help: "Only items of this source (repeatable: items of any of them).") var source: [String] = []
    @Option(help: "Only items in this category and its sub-categories (a path such as News/Local, or the mount's folder names; any case; repeatable: items in any of them).")
    var category: [String] = []
    @Option(help: ArgumentHelp("Only items in these states, comma-separated (\(ItemState.allCases.map(\.rawValue).joined(separator: ", ")); repeatable)."),
            completion: .list(ItemState.allCases.map(\.rawValue))) var state: [String] = []
    @Option(help: "Order: name (A to Z), date (newest published first), size (largest first), downloaded (newest first).")
    var sort: SortOrder?
    @Flag(help: "Only items downloaded in the last recent-days days (the mount's recent/), newest first.") var recent = false
    @Flag(help: "Only cached items not marked watched (the mount's unwatched/).") var unwatched = false
    @Flag(help: "Print a JSON array for scripts.") var json = false

    enum SortOrder: String, ExpressibleByArgument, CaseIterable {
        case name, date, size, downloaded
    }

    private var states: [ItemState] {
        state.flatMap { $0.split(separator: ",") }.compactMap { ItemState(rawValue: $0.trimmingCharacters(in: .whitespaces)) }
    }

    func validate() throws {
        for word in state.flatMap({ $0.split(separator: ",") }) where ItemState(rawValue: word.trimmingCharacters(in: .whitespaces)) == nil {
            throw ValidationError("unknown state '\(word)'; states are \(ItemState.allCases.map(\.rawValue).joined(separator: ", "))")
        }
    }

    func run() throws {
        var filter = ItemFilter()
        if !source.isEmpty { filter.sources = source }
        if !states.isEmpty {
            filter.states = states
            filter.includeDeleted = states.contains(.deleted)
        }
        let library = try options.open()
        for source in source where try library.store.source(named: source) == nil {
            throw CLIError("no source named '\(source)' (offlinefs source list shows the sources)")
        }
        if !category.isEmpty {
            let categories = try library.store.categories()
            filter.categoryPaths = try category.map { try Self.categoryPath($0, in: categories) }
        }
        let recentCutoff = try recent
            ? Date().addingTimeInterval(-Double(library.store.policies().recentDays) * 86_400) : nil
        let listed = { (item: ItemSummary) -> Bool in
            if let recentCutoff, item.state != ItemState.cached.rawValue || !(item.downloaded.map { $0 >= recentCutoff } ?? false) {
                return false
            }
            return !unwatched || (item.state == ItemState.cached.rawValue && !item.watched)
        }
        let order = sort ?? (recent ? .downloaded : nil)
        if json && order == nil {
            // In the library's order: printed as read, whatever the library's size.
            var printer = JSONArrayPrinter()
            try library.forEachItem(filter) { item in
                if listed(item) { try printer.add(item) }
            }
            try printer.finish()
            return
        }
        let items = Self.sorted(try library.items(filter).filter(listed), by: order)
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

    /// Stable: items that compare equal keep the library's order.
    static func sorted(_ items: [ItemSummary], by order: SortOrder?) -> [ItemSummary] {
        guard let order else { return items }
        return items.enumerated().sorted { a, b in
            let (x, y) = (a.element, b.element)
            let before: Bool?
            switch order {
            case .name:
                let comparison = x.fileName.localizedStandardCompare(y.fileName)
                before = comparison == .orderedSame ? nil : comparison == .orderedAscending
            case .date: before = x.published == y.published ? nil : (x.published ?? .distantPast) > (y.published ?? .distantPast)
            case .size: before = x.size == y.size ? nil : (x.size ?? -1) > (y.size ?? -1)
            case .downloaded:
                before = x.downloaded == y.downloaded ? nil : (x.downloaded ?? .distantPast) > (y.downloaded ?? .distantPast)
            }
            return before ?? (a.offset < b.offset)
        }.map(\.element)
    }

    /// The category `text` names: its folder names under the mount's `categories/` (unique;
    /// a `/` in a name reads `∕` there), else its names joined with `/` as the feeds give them
    /// (so "AC/DC" finds the category of that name), each in its exact case first, then any.
    static func categoryPath(_ text: String, in categories: [OfflineStore.Category]) throws -> [String] {
        let wanted = text.count > 1 && text.hasSuffix("/") ? String(text.dropLast()) : text
        let tiers: [(OfflineStore.Category) -> String] = [
            { $0.folderPath.joined(separator: "/") }, { $0.path.joined(separator: "/") },
            { $0.folderPath.joined(separator: "/").lowercased() }, { $0.path.joined(separator: "/").lowercased() },
        ]
        let found = tiers.enumerated().lazy.map { tier, key in
            categories.filter { key($0) == (tier < 2 ? wanted : wanted.lowercased()) }.map(\.path)
        }.first { !$0.isEmpty } ?? []
        guard found.count <= 1 else {
            throw CLIError("'\(text)' names several categories (\(found.map { $0.joined(separator: " > ") }.joined(separator: ", "))): give its folder name under categories/")
        }
        guard let path = found.first else { throw CLIError("no category '\(text)' (the mount's categories/ folder shows them)") }
        return path
    }
}
