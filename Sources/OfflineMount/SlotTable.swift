/// An open hash table of 4-byte values whose keys are kept elsewhere (linear probing, at
/// most half full): a folder's names (`TreeFolder`, values are `NameTable` entries) and the
/// items by id (`TreeItems`, values are rows). The caller hashes keys and tells whether a
/// value has the one it looks for.
///
/// Why not a `Dictionary`: it keeps its buckets at most three-quarters full and each holds
/// the key and the value. `[FileName: Int]` was 4 MiB for a folder of 100,000 names (and an
/// item is listed in several folders), this 1 MiB; `[Int64: Int32]` of a million items was
/// 24 MiB, this 8.
struct SlotTable: Sendable {
    /// Value + 1; 0: empty.
    private var slots: [UInt32] = []
    private(set) var count = 0

    /// The value that `matches`, its key hashed to `hash`.
    func find(hash: Int, matches: (UInt32) -> Bool) -> UInt32? {
        guard !slots.isEmpty else { return nil }
        let mask = slots.count - 1
        var slot = hash & mask
        while slots[slot] != 0 {
            if matches(slots[slot] - 1) { return slots[slot] - 1 }
            slot = (slot + 1) & mask
        }
        return nil
    }

    /// Adds `value` unless one that `matches` is there (which stays: the first one wins).
    /// - Parameter rehash: the hash of a value's key, when the table grows.
    /// - Returns: the value that was there, or nil when `value` was added.
    mutating func insert(_ value: UInt32, hash: Int, matches: (UInt32) -> Bool, rehash: (UInt32) -> Int) -> UInt32? {
        precondition(value < UInt32.max)
        if (count + 1) * 2 > slots.count { resize(to: Self.slotCount(for: count + 1), rehash: rehash) }
        let mask = slots.count - 1
        var slot = hash & mask
        while slots[slot] != 0 {
            if matches(slots[slot] - 1) { return slots[slot] - 1 }
            slot = (slot + 1) & mask
        }
        slots[slot] = value + 1
        count += 1
        return nil
    }

    /// Room for `values` values without growing.
    mutating func reserveCapacity(_ values: Int, rehash: (UInt32) -> Int) {
        let needed = Self.slotCount(for: values)
        if needed > slots.count { resize(to: needed, rehash: rehash) }
    }

    /// A power of two at least twice `values` (16 at least).
    private static func slotCount(for values: Int) -> Int {
        var count = 16
        while count < values * 2 { count *= 2 }
        return count
    }

    private mutating func resize(to slotCount: Int, rehash: (UInt32) -> Int) {
        let old = slots
        slots = [UInt32](repeating: 0, count: slotCount)
        let mask = slotCount - 1
        for stored in old where stored != 0 {
            var slot = rehash(stored - 1) & mask
            while slots[slot] != 0 { slot = (slot + 1) & mask }
            slots[slot] = stored
        }
    }
}
