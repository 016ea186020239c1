/// Collects what every parser produces the same way: items without duplicate content ids,
/// the set of category paths (parents included), capped warnings, and the item limit.
struct FeedAssembler {
    let limits: FeedLimits
    var warnings: FeedWarnings
    private(set) var items: [FeedItem] = []
    private(set) var categories: [[String]] = []
    /// Items met so far, added or skipped: the position a warning names.
    private(set) var itemsRead = 0
    private var seenIDs: Set<String> = []
    private var seenCategories: Set<[String]> = []

    init(limits: FeedLimits) {
        self.limits = limits
        self.warnings = FeedWarnings(max: limits.maxWarnings)
    }

    /// Adds an item unless its content id was seen already (the first one wins).
    mutating func add(_ item: FeedItem) throws(FeedError) {
        itemsRead += 1
        guard seenIDs.insert(item.contentID).inserted else {
            warnings.add("item \(FeedWarnings.quote(item.contentID)) skipped: duplicate content id (the first one is kept)")
            return
        }
        guard items.count < limits.maxItems else {
            throw FeedError(
                .tooManyItems,
                "The feed has more than \(limits.maxItems) items, the limit per feed document; raise the limit or split the catalog into pages.")
        }
        for path in item.categories { addCategory(path) }
        items.append(item)
    }

    /// Records a category path and each of its parents, parents first.
    mutating func addCategory(_ path: [String]) {
        guard !path.isEmpty, !seenCategories.contains(path) else { return }
        for length in 1...path.count {
            let prefix = Array(path.prefix(length))
            if seenCategories.insert(prefix).inserted { categories.append(prefix) }
        }
    }

    mutating func skip(_ contentID: String?, because reason: String) {
        itemsRead += 1
        if let contentID {
            warnings.add("item \(FeedWarnings.quote(contentID)) skipped: \(reason)")
        } else {
            warnings.add("item #\(itemsRead) skipped: \(reason)")
        }
    }
}
