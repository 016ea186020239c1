import Synchronization

/// Counts this process's catalog changes that can change where an item's bytes come from (a
/// merge that updated or removed items, a source removed), so that what was built in memory
/// from the catalog can tell it may be stale without a store read.
///
/// Each such write counts twice: inside its transaction, and again once it committed. Something
/// built from a read that started at generation `g` is current only while the generation is
/// still `g` (a read between the two counts saw the old rows, and the second count outdates it).
public final class CatalogChanges: Sendable {
    private let count = Atomic<Int>(0)

    public init() {}

    /// The current generation.
    public var generation: Int { count.load(ordering: .acquiring) }

    func bump() {
        count.add(1, ordering: .acquiringAndReleasing)
    }
}
