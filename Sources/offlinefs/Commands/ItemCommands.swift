import ArgumentParser
import OfflineEngine

/// `pause|resume|cancel|delete|evict|lock|unlock|renew|acquire <ref>…`: one shape, one route.
protocol ItemCommand: ParsableCommand {
    func command(_ reference: String) -> LibraryCommand
    var options: LibraryOptions { get }
    var references: [String] { get }
}

extension ItemCommand {
    func run() throws {
        let library = try options.open()
        _ = try CommandRouting.perform(references.map(command(_:)), library: library)
    }
}

private let referenceHelp = ArgumentHelp("Items: an item id, source/content-id, or a path in the mount (from its root, or from the current folder).")

struct PauseCommand: ItemCommand {
    static let configuration = CommandConfiguration(commandName: "pause", abstract: "Stop downloads until resumed.",
                                                    discussion: "Example: offlinefs pause acme/ep-001")
    func command(_ reference: String) -> LibraryCommand { .pause(item: reference) }
    @OptionGroup var options: LibraryOptions
    @Argument(help: referenceHelp, transform: ItemArgument.inMount) var references: [String]
}

struct ResumeCommand: ItemCommand {
    static let configuration = CommandConfiguration(commandName: "resume", abstract: "Queue paused, idle or failed items again.",
                                                    discussion: "Example: offlinefs resume acme/ep-001")
    func command(_ reference: String) -> LibraryCommand { .resume(item: reference) }
    @OptionGroup var options: LibraryOptions
    @Argument(help: referenceHelp, transform: ItemArgument.inMount) var references: [String]
}

struct CancelCommand: ItemCommand {
    static let configuration = CommandConfiguration(commandName: "cancel", abstract: "Stop downloads and discard their partial bytes.",
                                                    discussion: "The items return to discovered. Example: offlinefs cancel 42")
    func command(_ reference: String) -> LibraryCommand { .cancel(item: reference) }
    @OptionGroup var options: LibraryOptions
    @Argument(help: referenceHelp, transform: ItemArgument.inMount) var references: [String]
}

struct DeleteCommand: ItemCommand {
    static let configuration = CommandConfiguration(commandName: "delete", abstract: "Remove items' files and metadata.",
                                                    discussion: "A tombstone keeps a re-sync from bringing them back; download brings one back.\nExample: offlinefs delete acme/ep-001")
    func command(_ reference: String) -> LibraryCommand { .delete(item: reference) }
    @OptionGroup var options: LibraryOptions
    @Argument(help: referenceHelp, transform: ItemArgument.inMount) var references: [String]
}

struct EvictCommand: ItemCommand {
    static let configuration = CommandConfiguration(commandName: "evict", abstract: "Remove items' cached media (thumbnails and subtitles kept).",
                                                    discussion: "The items stay listed and can be streamed or downloaded again.\nExample: offlinefs evict \"sources/acme/Launch Day [ep-001].mp4\"")
    func command(_ reference: String) -> LibraryCommand { .evict(item: reference, sideFiles: all) }
    @OptionGroup var options: LibraryOptions
    @Flag(help: "Remove the cached thumbnail and subtitles too.") var all = false
    @Argument(help: referenceHelp, transform: ItemArgument.inMount) var references: [String]
}

struct LockCommand: ItemCommand {
    static let configuration = CommandConfiguration(commandName: "lock", abstract: "Pin items: never evicted or deleted.",
                                                    discussion: "Neither a cache limit, delete-watched-after, rm, evict nor delete removes a locked item's files (unlock first).\nExample: offlinefs lock acme/ep-001")
    func command(_ reference: String) -> LibraryCommand { .lock(item: reference) }
    @OptionGroup var options: LibraryOptions
    @Argument(help: referenceHelp, transform: ItemArgument.inMount) var references: [String]
}

struct UnlockCommand: ItemCommand {
    static let configuration = CommandConfiguration(commandName: "unlock", abstract: "Unpin items.",
                                                    discussion: "Example: offlinefs unlock acme/ep-001")
    func command(_ reference: String) -> LibraryCommand { .unlock(item: reference) }
    @OptionGroup var options: LibraryOptions
    @Argument(help: referenceHelp, transform: ItemArgument.inMount) var references: [String]
}

struct RenewCommand: ItemCommand {
    static let configuration = CommandConfiguration(commandName: "renew", abstract: "Re-acquire items' licences.",
                                                    discussion: "Asks the licence URL when the catalog names one.\nExample: offlinefs renew acme/film-1")
    func command(_ reference: String) -> LibraryCommand { .renew(item: reference) }
    @OptionGroup var options: LibraryOptions
    @Argument(help: referenceHelp, transform: ItemArgument.inMount) var references: [String]
}

struct AcquireCommand: ItemCommand {
    static let configuration = CommandConfiguration(commandName: "acquire", abstract: "Acquire items' licences now, without downloading.",
                                                    discussion: "A rental's clock starts now; an acquired licence is renewed.\nExample: offlinefs acquire acme/film-1")
    func command(_ reference: String) -> LibraryCommand { .acquire(item: reference) }
    @OptionGroup var options: LibraryOptions
    @Argument(help: referenceHelp, transform: ItemArgument.inMount) var references: [String]
}

struct WatchedCommand: ItemCommand {
    static let configuration = CommandConfiguration(commandName: "watched", abstract: "Mark items watched (their resume points go to 0).",
                                                    discussion: "Example: offlinefs watched acme/ep-001")
    func command(_ reference: String) -> LibraryCommand { .setWatched(item: reference, true) }
    @OptionGroup var options: LibraryOptions
    @Argument(help: referenceHelp, transform: ItemArgument.inMount) var references: [String]
}

struct UnwatchedCommand: ItemCommand {
    static let configuration = CommandConfiguration(commandName: "unwatched", abstract: "Clear items' watched marks.",
                                                    discussion: "Example: offlinefs unwatched acme/ep-001")
    func command(_ reference: String) -> LibraryCommand { .setWatched(item: reference, false) }
    @OptionGroup var options: LibraryOptions
    @Argument(help: referenceHelp, transform: ItemArgument.inMount) var references: [String]
}

/// `played <ref> [<start> <end>]`: one item, and the seconds played.
struct PlayedCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "played", abstract: "Record a playback: played through (watched), or from one second to another.",
        discussion: """
            With a span, the end is the resume point (user.offline.position), and the item \
            is watched once the end reaches 90 % of its duration or its last 60 seconds.
            Examples: offlinefs played acme/ep-001
                      offlinefs played acme/ep-001 0 1800
            """)
    @OptionGroup var options: LibraryOptions
    @Argument(help: "The item: an item id, source/content-id, or a path in the mount.", transform: ItemArgument.inMount)
    var reference: String
    @Argument(help: "Start and end of what was played, in seconds.") var span: [Double] = []

    func validate() throws {
        guard span.isEmpty || span.count == 2 else { throw ValidationError("give both the start and the end second, or neither") }
        guard span.allSatisfy({ $0.isFinite && $0 >= 0 }) else { throw ValidationError("seconds are numbers from 0 on") }
        if span.count == 2, span[0] > span[1] { throw ValidationError("the start (\(span[0])) is after the end (\(span[1]))") }
    }

    func run() throws {
        let library = try options.open()
        let played = span.count == 2 ? PlayedSpan(start: span[0], end: span[1]) : nil
        _ = try CommandRouting.perform([.played(item: reference, span: played)], library: library)
    }
}
