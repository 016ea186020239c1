/// A state-changing request, whichever front end it comes from: the CLI, a line written to
/// the mount's `.control` file, or an xattr toggle. One language, one performer (DESIGN §2, §6).
///
/// Items are named as the user wrote them (an item id, `source/content-id`, or a path in the
/// mount); the performer resolves them with `ItemReference.resolve`.
public enum LibraryCommand: Sendable, Equatable {
    case download(item: String, options: DownloadOptions)
    case pause(item: String)
    case resume(item: String)
    /// Stops and discards partial bytes; the item returns to `discovered`.
    case cancel(item: String)
    /// Files and metadata; a tombstone keeps a re-sync from bringing it back.
    case delete(item: String)
    /// The media's cached files; the item stays listed. With `sideFiles`, its thumbnail and
    /// subtitles too (`evict <item> all`).
    case evict(item: String, sideFiles: Bool = false)
    case lock(item: String)
    case unlock(item: String)
    case renew(item: String)
    /// Acquires the licence now (renews one already acquired), without downloading: a rental
    /// fetched before a trip, its clock started at once.
    case acquire(item: String)
    /// A playback happened (docs/playback.md). Without `span`: played through, so watched. With
    /// one: played from `start` to `end` seconds; the resume point is `end`, and the item is
    /// watched when `end` reaches `PlayRule.watchedFrom`.
    case played(item: String, span: PlayedSpan? = nil)
    /// Sets (`true`) or clears the watched mark by hand; set, the resume point goes to 0.
    case setWatched(item: String, Bool)
    /// Sets the resume point by hand, in seconds.
    case setPosition(item: String, seconds: Double)
    case sync(source: String?)
    case addSource(name: String, feedURL: String)
    case removeSource(name: String)
    case subscribe(source: String)
    case unsubscribe(source: String)
    case setPolicy(name: String, value: String)
}

extension LibraryCommand {
    /// The item the command names, as typed; nil for source and policy commands.
    public var itemReference: String? {
        switch self {
        case .download(let item, _), .pause(let item), .resume(let item), .cancel(let item), .delete(let item),
             .evict(let item, _), .lock(let item), .unlock(let item), .renew(let item), .acquire(let item),
             .played(let item, _), .setWatched(let item, _), .setPosition(let item, _):
            return item
        case .sync, .addSource, .removeSource, .subscribe, .unsubscribe, .setPolicy:
            return nil
        }
    }
}

/// The seconds of an item a `played` command says were played.
public struct PlayedSpan: Sendable, Equatable {
    public var start: Double
    public var end: Double

    public init(start: Double, end: Double) {
        self.start = start
        self.end = end
    }
}

/// Options of `download`.
public struct DownloadOptions: Sendable, Equatable {
    public enum Quality: Sendable, Equatable {
        case low, medium, high
        case bitsPerSecond(Int)
        /// Back to the default: the highest the policies allow.
        case auto

        /// `low`, `medium`, `high`, `auto` or a positive number of bits per second.
        public init?(_ text: some StringProtocol) {
            switch text.lowercased() {
            case "low": self = .low
            case "medium": self = .medium
            case "high": self = .high
            case "auto": self = .auto
            default:
                guard let bits = Int(text), bits > 0 else { return nil }
                self = .bitsPerSecond(bits)
            }
        }

        public var text: String {
            switch self {
            case .low: "low"
            case .medium: "medium"
            case .high: "high"
            case .auto: "auto"
            case .bitsPerSecond(let bits): String(bits)
            }
        }
    }

    /// HLS variant choice; nil: the one chosen before (the highest the policies allow when
    /// none was).
    public var quality: Quality?
    /// Stop after this many seconds of an HLS stream (→ `partially-cached`).
    public var partialSeconds: Double?
    /// HLS audio languages fetched beside the default audio; nil: those asked before; empty:
    /// the default audio only (`audio=default`).
    public var audio: [String]?

    public init(quality: Quality? = nil, partialSeconds: Double? = nil, audio: [String]? = nil) {
        self.quality = quality
        self.partialSeconds = partialSeconds
        self.audio = audio
    }
}

/// Carries out library commands. The running engine implements it (the mount process, or
/// `download --wait`); without an engine, commands change the store directly.
public protocol CommandPerformer: Sendable {
    /// Performs `command`; returns a one-line confirmation for people, or throws an error
    /// whose description says what went wrong (unknown item, bad policy value, …).
    func perform(_ command: LibraryCommand) throws -> String
}
