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
            Exits with status 1 when any source failed; its error also shows in 'source list'. \
            With the library mounted, the mount's engine syncs and this waits for its outcome.
            Example: offlinefs sync acme
            """)

    @OptionGroup var options: LibraryOptions
    @Argument(help: "Only this source.") var source: String?

    func run() throws {
        if let outcomes = try syncThroughMount() {
            for outcome in outcomes where !outcome.failed { print(outcome.summary) }
            return try fail(outcomes.filter(\.failed).map { ($0.sourceName, $0.summary) })
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
        try fail(reports.filter { !$0.succeeded }.map { ($0.sourceName, $0.summary) })
    }

    /// With the library mounted, its engine syncs: this sends the request and waits for each
    /// source's outcome, so the output and exit status are the same as without a mount.
    private func syncThroughMount() throws -> [MountOutcomes.SyncOutcome]? {
        guard let control = RunningMount.controlFile(for: options.folder) else { return nil }
        let library = try options.open()
        if let source, try library.store.source(named: source) == nil {
            throw CLIError("no source named '\(source)' (offlinefs source list shows the sources)")
        }
        let outcomes = MountOutcomes(store: library.store, library: library.folder)
        let sources = try outcomes.sourcesBeforeSync(named: source)
        if sources.isEmpty { print("no subscribed sources; add one with 'offlinefs source add <name> <url>'") }
        let seq = try library.store.lastEventSeq()
        try ControlClient(controlFile: control, store: library.store).send(.sync(source: source))
        return try outcomes.syncs(of: sources, eventsAfter: seq)
    }

    /// Failures go into the one error line, with the step that retries them.
    private func fail(_ failed: [(sourceName: String, summary: String)]) throws {
        guard !failed.isEmpty else { return }
        let retry = failed.count == 1 ? "offlinefs sync \(failed[0].sourceName)" : "offlinefs sync"
        throw CLIError(failed.map(\.summary).joined(separator: "; ")
                       + " (check the URL and the network, then run '\(retry)' again)")
    }
}
