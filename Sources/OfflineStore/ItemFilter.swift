/// Which items `LibraryStore.items(matching:)` returns. Every field set must match.
public struct ItemFilter: Sendable, Hashable {
    /// Source names: an item of any of them.
    public var sources: [String]?
    /// Category paths, names from the root (`["news", "local"]`): an item in any of them or
    /// their sub-categories.
    public var categoryPaths: [[String]]?
    public var state: ItemState?
    /// Any of these states (with `state`, both must hold).
    public var states: [ItemState]?
    /// Tombstones (`deleted`) are hidden unless asked for (or `state == .deleted`).
    public var includeDeleted: Bool

    public init(source: String? = nil, categoryPath: [String]? = nil, state: ItemState? = nil,
                includeDeleted: Bool = false) {
        sources = source.map { [$0] }
        categoryPaths = categoryPath.map { [$0] }
        self.state = state
        self.includeDeleted = includeDeleted
    }

    /// Every item but tombstones.
    public static let all = ItemFilter()

    /// Every item something was asked of or done to: all but `discovered` and tombstones (what
    /// `.status` lists). Through the state index: a library is mostly `discovered` items.
    public static let notDiscovered: ItemFilter = {
        var filter = ItemFilter()
        filter.states = ItemState.allCases.filter { $0 != .discovered && $0 != .deleted }
        return filter
    }()
}

/// A listing row: the item with what a listing shows beside it.
public struct ItemListing: Sendable, Codable, Hashable {
    public var item: Item
    public var sourceName: String
    /// Name paths of the item's categories, sorted.
    public var categoryPaths: [[String]]
}
