import ArgumentParser
import OfflineEngine
import OfflineStore

struct SyncCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Fetch sources' feeds and update the catalog.",
        discussion: """
            Without a name, syncs every subscribed source. Requests are conditional \
            (ETag / Last-Modified): an unchanged feed costs one small request.
            Exits with status 1 when any source failed; its error also shows in 'source list'.
            Example: offlinefs sync acme
            """)

    @OptionGroup var options: LibraryOptions
    @Argument(help: "Only this source.") var source: String?

    func run() throws {
        if try options.sendThroughMount([.sync(source: source)]) {
            print("syncing \(source ?? "every subscribed source") on the running mount (results in .events and 'offlinefs source list')")
            return
        }
        let library = try options.open()
        if let source, try library.store.source(named: source) == nil {
            throw CLIError("no source named '\(source)' (offlinefs source list shows the sources)")
        }
        let reports = try library.sync(sourceName: source)
        if reports.isEmpty { print("no subscribed sources; add one with 'offlinefs source add <name> <url>'") }
        for report in reports where report.succeeded {
            print(report.summary)
            for warning in report.warnings.prefix(20) { print("  warning: \(warning)") }
            if report.warnings.count > 20 { print("  … and \(report.warnings.count - 20) more warnings") }
        }
        // Failures go into the one error line, with the step that retries them.
        let failed = reports.filter { !$0.succeeded }
        guard !failed.isEmpty else { return }
        let retry = failed.count == 1 ? "offlinefs sync \(failed[0].sourceName)" : "offlinefs sync"
        throw CLIError(failed.map(\.summary).joined(separator: "; ")
                       + " (check the URL and the network, then run '\(retry)' again)")
    }
}
