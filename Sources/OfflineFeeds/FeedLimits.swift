/// Caps that keep a hostile feed from using unbounded time or memory (DESIGN §4).
public struct FeedLimits: Sendable, Equatable {
    /// Documents larger than this are refused before any parsing (`tooLarge`).
    public var maxDocumentBytes: Int
    /// More items than this in one document is an error (`tooManyItems`), not a truncation:
    /// a source silently missing items is worse than a clear error naming the setting.
    public var maxItems: Int
    /// Deepest `[`/`{` nesting accepted in a JSON catalog (`tooDeep`).
    public var maxJSONDepth: Int
    /// Longest text field kept, in UTF-8 bytes. Longer text is cut on a character boundary
    /// (with a warning), never rejected.
    public var maxStringBytes: Int
    /// Most warnings kept in `ParsedFeed.warnings`; the rest are counted.
    public var maxWarnings: Int
    /// Wall-clock budget for one parse (`deadline`).
    public var deadline: Duration

    public init(
        maxDocumentBytes: Int = 256_000_000,
        maxItems: Int = 1_000_000,
        maxJSONDepth: Int = 64,
        maxStringBytes: Int = 1_048_576,
        maxWarnings: Int = 200,
        deadline: Duration = .seconds(60)
    ) {
        self.maxDocumentBytes = maxDocumentBytes
        self.maxItems = maxItems
        self.maxJSONDepth = maxJSONDepth
        self.maxStringBytes = maxStringBytes
        self.maxWarnings = maxWarnings
        self.deadline = deadline
    }
}
