/// Which items `LibraryStore.items(matching:)` returns. Every field set must match.
public struct ItemFilter: Sendable, Hashable {
    /// Source name.
    public var source: String?
    /// Category names from the root (`["news", "local"]`); matches that category and its
    /// sub-categories.
    public var categoryPath: [String]?
    public var state: ItemState?
    /// Tombstones (`deleted`) are hidden unless asked for (or `state == .deleted`).
    public var includeDeleted: Bool

    public init(source: String? = nil, categoryPath: [String]? = nil, state: ItemState? = nil,
                includeDeleted: Bool = false) {
        self.source = source
        self.categoryPath = categoryPath
        self.state = state
        self.includeDeleted = includeDeleted
    }

    /// Every item but tombstones.
    public static let all = ItemFilter()
}

/// A listing row: the item with what a listing shows beside it.
public struct ItemListing: Sendable, Codable, Hashable {
    public var item: Item
    public var sourceName: String
    /// Name paths of the item's categories, sorted.
    public var categoryPaths: [[String]]
}
