import ArgumentParser
import OfflineEngine

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
        let reports = try options.open().sync(sourceName: source)
        if reports.isEmpty { print("no subscribed sources; add one with 'offlinefs source add <name> <url>'") }
        for report in reports {
            print(report.summary)
            for warning in report.warnings.prefix(20) { print("  warning: \(warning)") }
            if report.warnings.count > 20 { print("  … and \(report.warnings.count - 20) more warnings") }
        }
        if reports.contains(where: { !$0.succeeded }) { throw ExitCode.failure }
    }
}
