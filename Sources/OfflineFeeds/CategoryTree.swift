/// Resolves the JSON catalog's flat category list (`id`, `name`, `parent`) into name paths,
/// root first. Hostile lists cannot loop or explode: a parent cycle is cut (its members
/// become top-level), an unknown parent makes the category top-level, and chains deeper
/// than `maxDepth` are cut, each with a warning.
struct CategoryTree {
    static let maxDepth = 32

    private struct Node {
        var name: String
        var parent: String?
    }

    private var nodes: [String: Node] = [:]
    /// Declaration order, so `paths` lists categories as the catalog does.
    private var order: [String] = []
    private var resolved: [String: [String]] = [:]

    init(_ list: [LenientObject<CatalogCategory>], limit: Int, warnings: inout FeedWarnings) {
        var cut = false
        for (index, element) in list.enumerated() {
            guard let category = element.value, let id = category.id?.value.flatMap({ FeedText.clean($0, limit: limit, cut: &cut) })
            else {
                warnings.add("category #\(index + 1) skipped: it has no id")
                continue
            }
            guard nodes[id] == nil else {
                warnings.add("category \(FeedWarnings.quote(id)) skipped: duplicate id (the first one is kept)")
                continue
            }
            let name = FeedText.clean(category.name?.value, limit: limit, field: "category \(FeedWarnings.quote(id)) name", warnings: &warnings)
            let parent = category.parent?.value.flatMap { FeedText.clean($0, limit: limit, cut: &cut) }
            nodes[id] = Node(name: name ?? id, parent: parent == id ? nil : parent)
            if parent == id { warnings.add("category \(FeedWarnings.quote(id)) is its own parent; it is shown at the top level") }
            order.append(id)
        }
        for id in order where nodes[id]?.parent.map({ nodes[$0] == nil }) == true {
            warnings.add("category \(FeedWarnings.quote(id)) has an unknown parent; it is shown at the top level")
            nodes[id]?.parent = nil
        }
        breakCycles(warnings: &warnings)
        for id in order { _ = path(of: id, warnings: &warnings) }
    }

    /// Every declared category's path, in declaration order.
    var paths: [[String]] { order.compactMap { resolved[$0] } }

    /// The path of a category id, or nil if the id is not declared.
    func path(of id: String) -> [String]? { resolved[id] }

    /// Walks each parent chain once (white/grey/black marking); a chain that meets itself
    /// is a cycle, and every member of it loses its parent.
    private mutating func breakCycles(warnings: inout FeedWarnings) {
        var finished: Set<String> = []
        for start in order where !finished.contains(start) {
            var chain: [String] = []
            var onChain: [String: Int] = [:]
            var current: String? = start
            while let id = current, !finished.contains(id) {
                if let position = onChain[id] {
                    for member in chain[position...] { nodes[member]?.parent = nil }
                    warnings.add("categories \(chain[position...].map(FeedWarnings.quote).joined(separator: ", ")) form a parent cycle; they are shown at the top level")
                    break
                }
                onChain[id] = chain.count
                chain.append(id)
                current = nodes[id]?.parent
            }
            finished.formUnion(chain)
        }
    }

    /// Iterative, so a chain of 100,000 categories declared leaf first cannot overflow the
    /// stack: collect the unresolved ancestors, then resolve them from the top down.
    private mutating func path(of id: String, warnings: inout FeedWarnings) -> [String] {
        var pending: [String] = []
        var current: String? = id
        while let next = current, resolved[next] == nil, nodes[next] != nil {
            pending.append(next)
            current = nodes[next]?.parent
        }
        for member in pending.reversed() {
            guard let node = nodes[member] else { continue }
            var path = [node.name]
            if let parent = node.parent, let parentPath = resolved[parent] {
                if parentPath.count >= Self.maxDepth {
                    warnings.add("category \(FeedWarnings.quote(member)) is nested deeper than \(Self.maxDepth) levels; it is shown at the top level")
                } else {
                    path = parentPath + path
                }
            }
            resolved[member] = path
        }
        return resolved[id] ?? []
    }
}
