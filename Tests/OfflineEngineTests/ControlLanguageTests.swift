import OfflineEngine
import Testing

/// The control language (DESIGN §2) as a pure function: lines → commands, commands → lines.
struct ControlLanguageTests {
    static let good: [(String, LibraryCommand)] = [
        ("download sources/acme/Launch Day [ep-001].mp4", .download(item: "sources/acme/Launch Day [ep-001].mp4", options: .init())),
        ("  download   acme/ep-001  ", .download(item: "acme/ep-001", options: .init())),
        ("download 42 quality=high", .download(item: "42", options: .init(quality: .high))),
        ("download sources/acme/Show [x].m3u8 quality=800000 partial=30",
         .download(item: "sources/acme/Show [x].m3u8", options: .init(quality: .bitsPerSecond(800_000), partialSeconds: 30))),
        ("download a b partial=1.5 quality=low", .download(item: "a b", options: .init(quality: .low, partialSeconds: 1.5))),
        ("download show quality=auto audio=en,FR", .download(item: "show", options: .init(quality: .auto, audio: ["en", "fr"]))),
        ("download show audio=default", .download(item: "show", options: .init(audio: []))),
        ("download \"  padded name.mp4 \" quality=medium", .download(item: "  padded name.mp4 ", options: .init(quality: .medium))),
        ("download \"odd quality=high\"", .download(item: "odd quality=high", options: .init())),
        ("download 'no \\n escapes'", .download(item: "no \\n escapes", options: .init())),
        ("download 'single \"quoted\"'", .download(item: "single \"quoted\"", options: .init())),
        ("download \"back\\\\slash \\\"q\\\"\"", .download(item: "back\\slash \"q\"", options: .init())),
        ("pause acme/ep-001\r", .pause(item: "acme/ep-001")),
        ("resume 7", .resume(item: "7")),
        ("cancel sources/acme/A b.mp4", .cancel(item: "sources/acme/A b.mp4")),
        ("delete x", .delete(item: "x")),
        ("evict x", .evict(item: "x")),
        ("evict sources/acme/A b.mp4 all", .evict(item: "sources/acme/A b.mp4", sideFiles: true)),
        ("evict \"ends in all\"", .evict(item: "ends in all")),
        ("evict 'x' all", .evict(item: "x", sideFiles: true)),
        ("pause a all", .pause(item: "a all")),
        ("lock x", .lock(item: "x")),
        ("unlock x", .unlock(item: "x")),
        ("renew x", .renew(item: "x")),
        ("acquire sources/acme/Film [f-1].mp4", .acquire(item: "sources/acme/Film [f-1].mp4")),
        ("pause quality=high", .pause(item: "quality=high")),
        ("played sources/acme/Launch Day [ep-001].mp4", .played(item: "sources/acme/Launch Day [ep-001].mp4")),
        ("played acme/ep-001 0 1800.5", .played(item: "acme/ep-001", span: PlayedSpan(start: 0, end: 1800.5))),
        ("played \"Episode 12\"", .played(item: "Episode 12")),
        ("watched 42", .setWatched(item: "42", true)),
        ("unwatched sources/acme/A b.mp4", .setWatched(item: "sources/acme/A b.mp4", false)),
        ("position sources/acme/A b.mp4 42", .setPosition(item: "sources/acme/A b.mp4", seconds: 42)),
        ("sync", .sync(source: nil)),
        ("sync acme", .sync(source: "acme")),
        ("source add acme https://example.com/feed.json", .addSource(name: "acme", feedURL: "https://example.com/feed.json")),
        ("source remove acme", .removeSource(name: "acme")),
        ("subscribe acme", .subscribe(source: "acme")),
        ("unsubscribe \"my podcasts\"", .unsubscribe(source: "my podcasts")),
        // Source names may hold spaces: the rest of the line, like an item reference.
        ("sync My Podcast", .sync(source: "My Podcast")),
        ("unsubscribe  my podcasts ", .unsubscribe(source: "my podcasts")),
        ("source remove Evening News", .removeSource(name: "Evening News")),
        ("source add Evening News https://example.com/feed.json", .addSource(name: "Evening News", feedURL: "https://example.com/feed.json")),
        ("source add \"Evening News\" https://example.com/feed.json", .addSource(name: "Evening News", feedURL: "https://example.com/feed.json")),
        // What Windows editors write first in a file.
        ("\u{FEFF}pause acme/ep-001", .pause(item: "acme/ep-001")),
        ("set download-window 01:00-06:00", .setPolicy(name: "download-window", value: "01:00-06:00")),
        ("set cache-limit 20 G", .setPolicy(name: "cache-limit", value: "20 G")),
        ("\tset\tretry-limit\t5", .setPolicy(name: "retry-limit", value: "5")),
    ]

    @Test(arguments: good)
    func parsesGoodLines(line: String, command: LibraryCommand) throws {
        #expect(try ControlLanguage.parse(line) == command)
        #expect(try ControlLanguage.parse(Array(line.utf8)) == command)
    }

    @Test(arguments: ["", "   ", "\t", "# a comment", "  # indented comment", "\r", "\u{FEFF}", "\u{FEFF}# comment"])
    func ignoresBlankAndCommentLines(line: String) throws {
        #expect(try ControlLanguage.parse(line) == nil)
    }

    static let bad: [(String, String)] = [
        ("frobnicate x", "unknown command 'frobnicate'"),
        ("download", "usage: download <item>"),
        ("pause   ", "usage: pause <item>"),
        ("download x quality=ultra", "bad quality 'ultra'"),
        ("download x quality=-5", "bad quality"),
        ("download x partial=0", "bad partial '0'"),
        ("download x partial=abc", "bad partial"),
        ("download x audio=", "bad audio ''"),
        ("download x audio=e", "bad audio 'e'"),
        ("download x audio=en;rm", "bad audio"),
        ("download \"x\" extra", "unknown download option 'extra'"),
        ("pause \"x\" quality=high", "'pause' takes no options"),
        ("evict \"x\" soon", "'evict' takes only 'all'"),
        ("evict x all all", "'evict' takes only 'all'"),
        ("download \"unterminated", "unterminated quote"),
        ("download \"x\"y", "text right after a closing quote"),
        ("download \"\"", "empty item reference"),
        ("source", "unknown command 'source '"),
        ("source list", "unknown command 'source list'"),
        ("source add acme", "usage: source add <name> <feed-url>"),
        ("source add \"a\" b c", "text after a quoted value"),
        ("sync \"a\" b", "text after a quoted value"),
        ("subscribe", "usage: subscribe <source>"),
        ("set cache-limit", "usage: set <policy> <value>"),
        ("set", "usage: set <policy> <value>"),
        ("download a\u{1}b", "control character U+1"),
        ("played x 10", "usage: played <item> [<start-seconds> <end-seconds>]"),
        ("played x 30 10", "the start (30) is after the end (10)"),
        ("played \"x\" soon 10", "'soon' is not a number"),
        ("position x", "usage: position <item> <seconds>"),
        ("position x -5", "usage: position <item> <seconds>"),
        ("watched", "usage: watched <item>"),
    ]

    @Test(arguments: bad)
    func refusesBadLinesWithAReason(line: String, reason: String) {
        #expect {
            _ = try ControlLanguage.parse(line)
        } throws: { error in
            (error as? ControlLanguage.ParseError)?.reason.contains(reason) == true
        }
    }

    @Test func refusesNULInvalidUTF8AndOverlongLines() {
        func reason(_ bytes: [UInt8]) -> String? {
            do {
                _ = try ControlLanguage.parse(bytes)
                return nil
            } catch {
                return error.reason
            }
        }
        #expect(reason(Array("download a".utf8) + [0] + Array("b".utf8))?.contains("NUL") == true)
        #expect(reason([0x64, 0xff, 0xfe])?.contains("UTF-8") == true)
        let long = Array("download ".utf8) + [UInt8](repeating: UInt8(ascii: "a"), count: ControlLanguage.maxLineBytes)
        #expect(reason(long)?.contains("too long") == true)
    }

    @Test func aLineOf64KiBIsParsed() throws {
        let name = String(repeating: "x", count: ControlLanguage.maxLineBytes - "download ".utf8.count)
        let line = Array("download \(name)".utf8)
        #expect(line.count == 65_536)
        #expect(try ControlLanguage.parse(line) == .download(item: name, options: .init()))
    }

    static let roundTrip: [LibraryCommand] = good.map(\.1) + [
        .download(item: " lead", options: .init()),
        .download(item: "trail ", options: .init(quality: .high)),
        .download(item: "ends partial=3", options: .init(partialSeconds: 2.25)),
        .download(item: "\"starts with a quote", options: .init()),
        .download(item: "'apostrophe", options: .init()),
        .download(item: "# not a comment", options: .init()),
        .pause(item: "line\nbreak\tand\u{7}bell"),
        .evict(item: "back\\slash"),
        .evict(item: "a show all", sideFiles: false),
        .evict(item: "a show all", sideFiles: true),
        .download(item: "ends audio=fr", options: .init(audio: ["en"])),
        .played(item: "Episode 12"),
        .played(item: "Episode 12", span: PlayedSpan(start: 1.5, end: 3)),
        .setPosition(item: "part 2", seconds: 0.25),
        .sync(source: "two words"),
        .addSource(name: "a b", feedURL: "https://example.com/a b"),
        .addSource(name: "\"quoted\" name", feedURL: "https://example.com/x"),
        .subscribe(source: " padded "),
        .setPolicy(name: "download-window", value: " padded "),
        .setPolicy(name: "x", value: "\"quoted\""),
    ]

    @Test(arguments: roundTrip)
    func formatRoundTrips(command: LibraryCommand) throws {
        let line = ControlLanguage.format(command)
        #expect(!line.contains("\n"))
        #expect(try ControlLanguage.parse(line) == command, "\(line)")
    }

    @Test func formatWritesTheLiteralFormWhenItReadsTheSame() {
        #expect(ControlLanguage.format(.download(item: "sources/acme/Launch Day [ep-001].mp4", options: .init()))
            == "download sources/acme/Launch Day [ep-001].mp4")
        #expect(ControlLanguage.format(.download(item: "acme/ep-1", options: .init(quality: .low, partialSeconds: 30)))
            == "download acme/ep-1 quality=low partial=30")
        #expect(ControlLanguage.format(.setPolicy(name: "cache-limit", value: "20G")) == "set cache-limit 20G")
    }

    @Test func theReferenceNamesEveryCommand() {
        for verb in ["download", "pause", "resume", "cancel", "delete", "evict", "lock", "unlock", "renew", "acquire", "played", "watched",
                     "unwatched", "position", "sync",
                     "source add", "source remove", "subscribe", "unsubscribe", "set"] {
            #expect(ControlLanguage.reference.contains(verb + " "), "\(verb)")
        }
    }
}
