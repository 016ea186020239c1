/// The control language of DESIGN §2: one command per line, written to the mount's `.control`
/// file or sent by the CLI through it. `parse` and `format` are pure and inverse
/// (`parse(format(c)) == c`).
///
/// Arguments:
/// - An item reference is the rest of the line, taken literally, so names with spaces need
///   no quoting: `download sources/acme/Launch Day [ep-001].mp4`. Surrounding blanks are
///   dropped. For `download`, trailing `quality=…` and `partial=…` words are options; for
///   `evict`, a trailing `all`.
/// - Quoting, for what the literal form cannot say (leading or trailing blanks, a name ending
///   in ` quality=high` or, for `evict`, in ` all`, a name starting with a quote): `"…"` with `\"`, `\\`, `\n`, `\t`
///   escapes, or `'…'` taken literally (like the shell's). After the closing quote only
///   options may follow.
/// - A source name is the rest of the line too (`sync My Podcast`); in `source add` it is all
///   but the last word, the feed URL. A policy name is a single word (quotable); its value is
///   the rest of the line.
/// - Empty lines and lines starting with `#` are ignored (`parse` returns `nil`), and so is a
///   byte order mark at the start of a line (what Windows editors put first in a file).
public enum ControlLanguage {
    /// Longest line accepted, in bytes without the newline (HARDENING test 9: a 64 KiB line).
    public static let maxLineBytes = 65_536

    /// Why a line is refused; `description` is the sentence appended to `.events`.
    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        public var reason: String
        public init(_ reason: String) { self.reason = reason }
        public var description: String { reason }
    }

    /// Parses one line (without its newline; a trailing `\r` is ignored). `nil`: nothing to do.
    public static func parse(_ bytes: some Collection<UInt8>) throws(ParseError) -> LibraryCommand? {
        guard bytes.count <= maxLineBytes else {
            throw ParseError("line too long (\(bytes.count) bytes; at most \(maxLineBytes))")
        }
        guard !bytes.contains(0) else { throw ParseError("line contains a NUL byte") }
        guard let text = String(validating: Array(bytes), as: UTF8.self) else {
            throw ParseError("line is not valid UTF-8")
        }
        return try parse(text)
    }

    /// Parses one line of text (without its newline).
    public static func parse(_ line: String) throws(ParseError) -> LibraryCommand? {
        var rest = Substring(line)
        if rest.last == "\r" { rest = rest.dropLast() }
        if rest.first == "\u{FEFF}" { rest = rest.dropFirst() }
        rest = rest.trimmingBlanks()
        guard !rest.isEmpty, rest.first != "#" else { return nil }
        if rest.contains(where: { $0 == "\0" }) { throw ParseError("line contains a NUL byte") }
        if let bad = rest.unicodeScalars.first(where: { $0.value < 0x20 && $0 != "\t" }) {
            throw ParseError("line contains control character U+\(String(bad.value, radix: 16, uppercase: true))")
        }
        let verb = rest.takeWord()
        switch verb {
        case "download":
            let (item, options) = try referenceAndOptions(rest, verb: verb)
            return .download(item: item, options: try downloadOptions(options))
        case "pause": return .pause(item: try reference(rest, verb: verb))
        case "resume": return .resume(item: try reference(rest, verb: verb))
        case "cancel": return .cancel(item: try reference(rest, verb: verb))
        case "delete": return .delete(item: try reference(rest, verb: verb))
        case "evict":
            let (item, options) = try referenceAndOptions(rest, verb: verb)
            guard options.allSatisfy({ $0 == "all" }), options.count <= 1 else {
                throw ParseError("'evict' takes only 'all' after the item (got '\(options.joined(separator: " "))')")
            }
            return .evict(item: item, sideFiles: !options.isEmpty)
        case "lock": return .lock(item: try reference(rest, verb: verb))
        case "unlock": return .unlock(item: try reference(rest, verb: verb))
        case "renew": return .renew(item: try reference(rest, verb: verb))
        case "acquire": return .acquire(item: try reference(rest, verb: verb))
        case "played":
            let (item, numbers) = try referenceAndNumbers(rest, verb: verb, counts: [0, 2], usage: "played <item> [<start-seconds> <end-seconds>]")
            guard numbers.count == 2 else { return .played(item: item) }
            guard numbers[0] <= numbers[1] else {
                throw ParseError("played: the start (\(formatNumber(numbers[0]))) is after the end (\(formatNumber(numbers[1])))")
            }
            return .played(item: item, span: PlayedSpan(start: numbers[0], end: numbers[1]))
        case "watched": return .setWatched(item: try reference(rest, verb: verb), true)
        case "unwatched": return .setWatched(item: try reference(rest, verb: verb), false)
        case "position":
            let (item, numbers) = try referenceAndNumbers(rest, verb: verb, counts: [1], usage: "position <item> <seconds>")
            return .setPosition(item: item, seconds: numbers[0])
        case "sync":
            return .sync(source: rest.isEmpty ? nil : try sourceName(rest, usage: "sync [<source>]"))
        case "subscribe":
            return .subscribe(source: try sourceName(rest, usage: "subscribe <source>"))
        case "unsubscribe":
            return .unsubscribe(source: try sourceName(rest, usage: "unsubscribe <source>"))
        case "source":
            let sub = rest.takeWord()
            switch sub {
            case "add":
                // The feed URL is the last argument (quoted or not); the name is what comes before.
                let usage = "source add <name> <feed-url>"
                var scan = rest
                var (urlStart, feedURL) = (rest.endIndex, String?.none)
                while case let next = scan.trimmingBlanks(), !next.isEmpty {
                    scan = next
                    urlStart = next.startIndex
                    feedURL = try scan.takeArgument()
                }
                guard let feedURL, !feedURL.isEmpty else { throw ParseError("usage: \(usage)") }
                return .addSource(name: try sourceName(rest[..<urlStart], usage: usage), feedURL: feedURL)
            case "remove":
                return .removeSource(name: try sourceName(rest, usage: "source remove <name>"))
            default:
                throw ParseError("unknown command 'source \(sub)' (use 'source add <name> <feed-url>' or 'source remove <name>')")
            }
        case "set":
            var words = rest
            let name = try words.takeArgument()
            let value = try words.takeRest()
            guard let name, let value, !value.isEmpty else { throw ParseError("usage: set <policy> <value>") }
            return .setPolicy(name: name, value: value)
        default:
            throw ParseError("unknown command '\(verb.prefix(80))' (read .control for the command reference)")
        }
    }

    /// The line for `command`, quoting only where the literal form would read differently.
    public static func format(_ command: LibraryCommand) -> String {
        switch command {
        case .download(let item, let options):
            var line = "download " + formatReference(item, hasOptions: true)
            if let quality = options.quality { line += " quality=" + quality.text }
            if let seconds = options.partialSeconds { line += " partial=\(formatNumber(seconds))" }
            if let audio = options.audio { line += " audio=" + (audio.isEmpty ? "default" : audio.joined(separator: ",")) }
            return line
        case .pause(let item): return "pause " + formatReference(item)
        case .resume(let item): return "resume " + formatReference(item)
        case .cancel(let item): return "cancel " + formatReference(item)
        case .delete(let item): return "delete " + formatReference(item)
        case .evict(let item, let sideFiles):
            return "evict " + formatReference(item, verb: "evict", hasOptions: sideFiles) + (sideFiles ? " all" : "")
        case .lock(let item): return "lock " + formatReference(item)
        case .unlock(let item): return "unlock " + formatReference(item)
        case .renew(let item): return "renew " + formatReference(item)
        case .acquire(let item): return "acquire " + formatReference(item)
        case .played(let item, let span):
            guard let span else { return "played " + formatReference(item, verb: "played", hasOptions: false) }
            return "played " + formatReference(item, verb: "played", hasOptions: true)
                + " \(formatNumber(span.start)) \(formatNumber(span.end))"
        case .setWatched(let item, let watched): return (watched ? "watched " : "unwatched ") + formatReference(item)
        case .setPosition(let item, let seconds):
            return "position " + formatReference(item, verb: "position", hasOptions: true) + " " + formatNumber(seconds)
        case .sync(let source): return source.map { "sync " + formatWord($0) } ?? "sync"
        case .addSource(let name, let url): return "source add \(formatWord(name)) \(formatWord(url))"
        case .removeSource(let name): return "source remove " + formatWord(name)
        case .subscribe(let name): return "subscribe " + formatWord(name)
        case .unsubscribe(let name): return "unsubscribe " + formatWord(name)
        case .setPolicy(let name, let value):
            let literal = value.trimmingBlanksString() == value && !value.isEmpty && !value.hasPrefix("\"") && !value.hasPrefix("'")
                && !value.contains(where: \.isLineBreakOrControl)
            return "set \(formatWord(name)) " + (literal ? value : quoted(value))
        }
    }

    /// What reading `.control` shows.
    public static let reference = """
        offlinefs control file: write one command per line, e.g.
          echo "download sources/acme/Launch Day [ep-001].mp4" > .control
        A bad line or an unknown item fails the write with EINVAL; the reason is appended to .events.

        <item> is a path in the mount, source/content-id, or an item id. Item and source names
        with spaces need no quotes; use "…" (escapes \\" \\\\ \\n \\t) or '…' for leading or
        trailing blanks.

          download <item> [quality=low|medium|high|auto|<bits-per-second>] [partial=<seconds>]
                           [audio=<lang>[,<lang>…]|default]
          pause <item>          resume <item>          cancel <item>
          delete <item>         files and metadata (a re-sync does not bring it back)
          evict <item> [all]    media files (all: thumbnail and subtitles too); stays listed
          lock <item>           unlock <item>          renew <item>
          acquire <item>        the licence now, without downloading
          played <item> [<start-seconds> <end-seconds>]  a playback (no span: played through)
          watched <item>        unwatched <item>       position <item> <seconds>
          sync [<source>]
          source add <name> <feed-url>                 source remove <name>
          subscribe <source>    unsubscribe <source>
          set <policy> <value>

        Lines starting with # and empty lines are ignored. Lines are at most 65536 bytes.
        Toggles without this file: setfattr -n user.offline.download -v on|paused|off <item>,
        setfattr -n user.offline.subscribed -v 1|0 sources/<source>.

        """

    // MARK: - Parsing helpers

    private static func reference(_ rest: Substring, verb: String) throws(ParseError) -> String {
        let (item, options) = try referenceAndOptions(rest, verb: verb)
        guard options.isEmpty else {
            throw ParseError("'\(verb)' takes no options (got '\(options.joined(separator: " "))')")
        }
        return item
    }

    /// The reference and, for a literal one, the trailing `name=value` option words.
    private static func referenceAndOptions(_ rest: Substring, verb: String) throws(ParseError) -> (String, [String]) {
        var rest = rest
        guard !rest.isEmpty else {
            throw ParseError("usage: \(verb) <item> (an item id, source/content-id, or a path in the mount)")
        }
        if rest.first == "\"" || rest.first == "'" {
            guard let item = try rest.takeArgument(), !item.isEmpty else { throw ParseError("\(verb): empty item reference") }
            var options: [String] = []
            while !rest.isEmpty { options.append(String(rest.takeWord())) }
            return (item, options)
        }
        guard ["download", "evict", "played", "position"].contains(verb) else { return (String(rest), []) }
        var options: [String] = []
        while let space = rest.lastIndex(where: { $0 == " " || $0 == "\t" }) {
            let word = rest[rest.index(after: space)...]
            guard isOption(word, verb: verb) else { break }
            options.insert(String(word), at: 0)
            rest = rest[..<space].trimmingBlanks()
        }
        return (String(rest), options)
    }

    /// The reference and the trailing numbers (seconds) of `played` and `position`; `counts`:
    /// how many numbers the verb takes. A quoted reference ends where its quote does.
    private static func referenceAndNumbers(_ rest: Substring, verb: String, counts: Set<Int>,
                                            usage: String) throws(ParseError) -> (String, [Double]) {
        let (item, words) = try referenceAndOptions(rest, verb: verb)
        var numbers: [Double] = []
        for word in words {
            guard let number = seconds(word) else { throw ParseError("\(verb): '\(word.prefix(40))' is not a number of seconds (usage: \(usage))") }
            numbers.append(number)
        }
        guard counts.contains(numbers.count) else { throw ParseError("usage: \(usage)") }
        return (item, numbers)
    }

    /// A number of seconds: a finite, non-negative decimal.
    private static func seconds(_ word: some StringProtocol) -> Double? {
        guard let number = Double(word), number.isFinite, number >= 0 else { return nil }
        return number
    }

    private static func isOption(_ word: Substring, verb: String) -> Bool {
        if verb == "played" || verb == "position" { return seconds(word) != nil }
        return verb == "evict" ? word == "all" : word.hasPrefix("quality=") || word.hasPrefix("partial=") || word.hasPrefix("audio=")
    }

    /// `audio=en,fr` (language tags) or `audio=default` (none beside the default audio).
    public static func audioLanguages(_ value: String) throws(ParseError) -> [String] {
        if value.lowercased() == "default" { return [] }
        let tags = HLSAudioLanguages.tags(HLSAudioLanguages.canonical(value.split(separator: ",").map(String.init)))
        guard !tags.isEmpty, tags.allSatisfy(HLSAudioLanguages.isValidTag) else {
            throw ParseError("bad audio '\(value.prefix(40))' (use language tags such as en,fr, or default)")
        }
        return tags
    }

    private static func downloadOptions(_ words: [String]) throws(ParseError) -> DownloadOptions {
        var options = DownloadOptions()
        for word in words {
            let value = word.drop { $0 != "=" }.dropFirst()
            if word.hasPrefix("quality=") {
                guard let quality = DownloadOptions.Quality(value) else {
                    throw ParseError("bad quality '\(value.prefix(40))' (use low, medium, high, auto or bits per second)")
                }
                options.quality = quality
            } else if word.hasPrefix("audio=") {
                options.audio = try audioLanguages(String(value))
            } else if word.hasPrefix("partial=") {
                guard let seconds = Double(value), seconds > 0, seconds.isFinite else {
                    throw ParseError("bad partial '\(value.prefix(40))' (use a number of seconds above 0)")
                }
                options.partialSeconds = seconds
            } else {
                throw ParseError("unknown download option '\(word.prefix(40))' (use quality=, partial= or audio=)")
            }
        }
        return options
    }

    /// A source name: the rest of the line as written (names may hold spaces), or one quoted
    /// argument with nothing after it.
    private static func sourceName(_ rest: Substring, usage: String) throws(ParseError) -> String {
        var rest = rest.trimmingBlanks()
        guard let name = try rest.takeRest(), !name.isEmpty else { throw ParseError("usage: \(usage)") }
        return name
    }

    // MARK: - Formatting helpers

    private static func formatReference(_ item: String, verb: String = "download", hasOptions: Bool = false) -> String {
        var needsQuotes = item.isEmpty || item.trimmingBlanksString() != item || item.hasPrefix("\"") || item.hasPrefix("'")
            || item.hasPrefix("#") || item.contains(where: \.isLineBreakOrControl)
        if hasOptions || verb == "evict" || verb == "played", let space = item.lastIndex(where: { $0 == " " || $0 == "\t" }),
           isOption(item[item.index(after: space)...], verb: verb) {
            needsQuotes = true
        }
        return needsQuotes ? quoted(item) : item
    }

    private static func formatWord(_ word: String) -> String {
        let plain = !word.isEmpty && !word.hasPrefix("\"") && !word.hasPrefix("'") && !word.hasPrefix("#")
            && !word.contains(where: { $0 == " " || $0 == "\t" || $0.isLineBreakOrControl })
        return plain ? word : quoted(word)
    }

    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7f {
                    result += "\\u{\(String(scalar.value, radix: 16))}"
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result + "\""
    }

    private static func formatNumber(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}

extension Character {
    fileprivate var isLineBreakOrControl: Bool {
        unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7f }
    }
}

extension StringProtocol {
    fileprivate func trimmingBlanksString() -> String {
        String(Substring(self).trimmingBlanks())
    }
}

extension Substring {
    fileprivate func trimmingBlanks() -> Substring {
        var result = self
        while let first = result.first, first == " " || first == "\t" { result.removeFirst() }
        while let last = result.last, last == " " || last == "\t" { result.removeLast() }
        return result
    }

    /// The next blank-separated word (unquoted), dropping it and the blanks after it.
    fileprivate mutating func takeWord() -> String {
        self = trimmingBlanks()
        let end = firstIndex(where: { $0 == " " || $0 == "\t" }) ?? endIndex
        let word = String(self[..<end])
        self = self[end...].trimmingBlanks()
        return word
    }

    /// The next argument, quoted or not; `nil` at the end of the line.
    fileprivate mutating func takeArgument() throws(ControlLanguage.ParseError) -> String? {
        self = trimmingBlanks()
        guard let first else { return nil }
        guard first == "\"" || first == "'" else { return takeWord() }
        var result = ""
        var index = self.index(after: startIndex)
        while index < endIndex {
            let character = self[index]
            if character == first {
                let after = self.index(after: index)
                guard after == endIndex || self[after] == " " || self[after] == "\t" else {
                    throw ControlLanguage.ParseError("text right after a closing quote")
                }
                self = self[after...].trimmingBlanks()
                return result
            }
            if first == "\"" && character == "\\" {
                index = self.index(after: index)
                guard index < endIndex else { break }
                switch self[index] {
                case "n": result.append("\n")
                case "t": result.append("\t")
                case "r": result.append("\r")
                case "u":
                    // `\u{hex}`: what `format` writes for other control characters.
                    let rest = self[self.index(after: index)...]
                    guard rest.first == "{", let close = rest.firstIndex(of: "}"),
                          let value = UInt32(rest[rest.index(after: rest.startIndex)..<close], radix: 16),
                          let scalar = Unicode.Scalar(value) else {
                        throw ControlLanguage.ParseError("bad \\u{…} escape")
                    }
                    result.unicodeScalars.append(scalar)
                    index = close
                default: result.append(self[index])
                }
            } else {
                result.append(character)
            }
            index = self.index(after: index)
        }
        throw ControlLanguage.ParseError("unterminated quote")
    }

    /// Everything left (a quoted argument when it starts with a quote), or `nil` when empty.
    fileprivate mutating func takeRest() throws(ControlLanguage.ParseError) -> String? {
        self = trimmingBlanks()
        guard let first else { return nil }
        if first == "\"" || first == "'" {
            let value = try takeArgument()
            guard isEmpty else { throw ControlLanguage.ParseError("text after a quoted value") }
            return value
        }
        defer { self = self[endIndex...] }
        return String(self)
    }
}
