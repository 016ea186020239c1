import ArgumentParser
import OfflineEngine
import OfflineStore

struct SetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set",
        abstract: "Change a policy (limits, download window, behaviour for new items).",
        discussion: """
            Examples: offlinefs set cache-limit 20G
                      offlinefs set download-window 01:00-06:00
                      offlinefs set download-behavior auto
            'offlinefs get' lists every policy with its value.
            """)

    @OptionGroup var options: LibraryOptions
    @Argument(help: "The policy's name.", completion: .list(Policy.allCases.map(\.rawValue))) var policy: String
    @Argument(help: "The new value.") var value: String

    func run() throws {
        let library = try options.open(creating: true)
        if try !options.sendThroughMount([.setPolicy(name: policy, value: value)]) {
            try library.setPolicy(policy, value)
        }
        let current = try library.policies().first { $0.name == policy }
        print("\(policy) = \(current?.value ?? value)")
    }
}

struct GetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Show one policy, or all of them.",
        discussion: "Example: offlinefs get cache-limit")

    @OptionGroup var options: LibraryOptions
    @Argument(help: "The policy's name (all when omitted).", completion: .list(Policy.allCases.map(\.rawValue))) var policy: String?
    @Flag(help: "Print JSON for scripts.") var json = false

    func run() throws {
        var policies = try options.open().policies()
        if let policy {
            policies = policies.filter { $0.name == policy }
            guard !policies.isEmpty else {
                let known = try options.open().policies().map(\.name).joined(separator: ", ")
                throw CLIError("unknown policy '\(policy)'; policies are \(known)")
            }
        }
        if json {
            try printJSON(Dictionary(uniqueKeysWithValues: policies.map { ($0.name, $0.value) }))
            return
        }
        if policy != nil, let only = policies.first {
            print(only.value)
            return
        }
        var table = TextTable(["POLICY", "VALUE", ""])
        for entry in policies { table.add([entry.name, entry.value, entry.isDefault ? "(default)" : ""]) }
        print(table.render(), terminator: "")
    }
}
