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
    @Argument(help: "The items.") var references: [String]
    @Option(help: "HLS quality: low, medium, high or bits per second.") var quality: String?
    @Option(help: "HLS: only the first N seconds.") var partial: Double?
    @Flag(help: "Run the engine here until the downloads end.") var wait = false

    func run() throws {
        let library = try options.open()
        let downloadOptions = try parsedOptions()
        let commands = references.map { LibraryCommand.download(item: $0, options: downloadOptions) }
        guard wait else {
            var suffix = ""
            if let quality { suffix += " quality=\(quality)" }
            if let partial { suffix += " partial=\(partial)" }
            _ = try CommandRouting.perform(commands, controlLines: references.map { "download \($0)\(suffix)" }, library: library)
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
        engine.start()
        let failures = DownloadWatch(engine: engine, itemIDs: items.map(\.id), tty: isatty(1) == 1).run()
        engine.stop()
        if failures > 0 { throw CLIError("\(failures) of \(items.count) item(s) not downloaded") }
    }

    private func parsedOptions() throws -> DownloadOptions {
        var result = DownloadOptions(partialSeconds: partial)
        switch quality?.lowercased() {
        case nil: break
        case "low": result.quality = .low
        case "medium": result.quality = .medium
        case "high": result.quality = .high
        case let text?:
            guard let bits = Int(text), bits > 0 else {
                throw ValidationError("--quality takes low, medium, high or a number of bits per second")
            }
            result.quality = .bitsPerSecond(bits)
        }
        return result
    }
}
