import ArgumentParser
import Foundation
import Glibc
import OfflineEngine
import OfflineStore

struct DownloadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "download",
        abstract: "Download items into the library's cache.",
        discussion: """
            An item is an item id, source/content-id, or a path in the mount; a content id \
            the catalog does not list yet is looked up (metadata-pending).
            Without --wait the items are queued for the running engine (a mount), or for the \
            next one. With --wait the engine runs in the foreground until every item has \
            ended: exit 0 when all are cached, 1 otherwise (with the reason). On a terminal \
            each item shows a progress bar with speed and ETA; otherwise one line per change. \
            Interrupted downloads resume from the bytes on disk.
            Example: offlinefs download acme/ep-001 --wait
            """)

    @OptionGroup var options: LibraryOptions
    @Argument(help: "The items.", transform: ItemArgument.inMount) var references: [String]
    @Option(help: "HLS quality: low, medium, high, auto (the default again) or bits per second; kept for later downloads.",
            completion: .list(["low", "medium", "high", "auto"]))
    var quality: String?
    @Option(help: "HLS: only the first N seconds.") var partial: Double?
    @Option(help: "HLS: audio languages fetched beside the default audio (en,fr), or default; kept for later downloads.")
    var audio: String?
    @Flag(help: "Run the engine here until the downloads end.") var wait = false

    func validate() throws {
        _ = try parsedOptions()
        if let partial, !(partial > 0) {
            throw ValidationError("--partial takes a number of seconds greater than 0")
        }
    }

    func run() throws {
        let downloadOptions = try parsedOptions()
        let commands = references.map { LibraryCommand.download(item: $0, options: downloadOptions) }
        if try options.sendThroughMount(commands) {
            guard wait else {
                print("queued \(references.count) item(s) on the running mount")
                return
            }
            return try waitThroughMount()
        }
        let library = try options.open()
        guard wait else {
            _ = try CommandRouting.perform(commands, library: library)
            return
        }
        let engine: Engine
        do {
            var configuration = SchedulerConfiguration()
            configuration.periodicSync = false  // runs for the asked items only
            engine = try Engine(library: library, configuration: configuration)
        } catch {
            throw CLIError("cannot run the engine: \(error)")
        }
        for command in commands {
            do { _ = try engine.commands.perform(command) } catch { throw CLIError("\(error)") }
        }
        var items: [Item] = []
        for reference in references {
            do { items.append(try ItemReference.resolve(reference, in: library.store)) } catch { throw CLIError("\(error)") }
        }
        let signals = StopOnSignals.install { engine.stop() }
        engine.start()
        let failures = DownloadWatch(engine: engine, itemIDs: items.map(\.id), tty: isatty(1) == 1).run()
        engine.stop(finishingHooks: true)  // the last item's events run the hook too
        withExtendedLifetime(signals) {}
        if failures > 0 { throw notDownloaded(failures, of: items.count) }
    }

    private func notDownloaded(_ failures: Int, of count: Int) -> CLIError {
        CLIError("\(failures) of \(count) item(s) not downloaded (the lines above say why; "
                 + "'offlinefs resume <item>' tries again, 'offlinefs status' shows each state)")
    }

    /// The mount's engine downloads: watch the store until every item has ended, as an engine
    /// of this process is watched.
    private func waitThroughMount() throws {
        let library = try options.open()
        let store = library.store
        let ids = try references.map { try ItemReference.resolve($0, in: store).id }
        let failures = DownloadWatch(store: store, library: library.folder, itemIDs: ids, tty: isatty(1) == 1).run()
        if failures > 0 { throw notDownloaded(failures, of: ids.count) }
    }

    private func parsedOptions() throws -> DownloadOptions {
        var result = DownloadOptions(partialSeconds: partial)
        if let quality {
            guard let parsed = DownloadOptions.Quality(quality) else {
                throw ValidationError("--quality takes low, medium, high, auto or a number of bits per second")
            }
            result.quality = parsed
        }
        if let audio {
            do { result.audio = try ControlLanguage.audioLanguages(audio) } catch { throw ValidationError("--audio: \(error)") }
        }
        return result
    }
}
