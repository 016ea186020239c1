import OfflineFUSE

/// A folder's index by name: for each name, its position in the folder's children. An open
/// hash table of 4-byte positions (linear probing, at most half full); the names stay in
/// the children, so a lookup compares against them there.
///
/// Why not `[FileName: Int]`: a dictionary keeps its buckets at most three-quarters full and
/// each holds a name reference and an `Int`, 16 bytes. At 100,000 names that was 4 MiB per
/// folder, and an item is listed in its source, its state folder and its categories. This
/// is 1 MiB.
struct NameIndex: Sendable {
    /// Position + 1 in the children; 0: empty.
    private var slots: [UInt32] = []
    private(set) var count = 0

    /// Room for `names` names without growing; `children` are those indexed so far.
    mutating func reserveCapacity(_ names: Int, children: [TreeChild]) {
        let needed = Self.slotCount(for: names)
        if needed > slots.count { rehash(to: needed, in: children) }
    }

    /// The position of `name` among `children`, if it is there.
    func position(of name: FileName, in children: [TreeChild]) -> Int? {
        guard !slots.isEmpty else { return nil }
        return probe(name, in: children).found
    }

    /// Records that `children[position]` is named `name`, unless the name is there already.
    /// - Returns: the position that holds the name now: `position`, or the one before.
    mutating func insert(_ name: FileName, at position: Int, in children: [TreeChild]) -> Int {
        if (count + 1) * 2 > slots.count { rehash(to: Self.slotCount(for: count + 1), in: children) }
        let (slot, found) = probe(name, in: children)
        if let found { return found }
        slots[slot] = UInt32(position + 1)
        count += 1
        return position
    }

    /// Where `name` is (its slot and position), or the empty slot where it would go.
    private func probe(_ name: FileName, in children: [TreeChild]) -> (slot: Int, found: Int?) {
        let mask = slots.count - 1
        var slot = name.hashValue & mask
        while slots[slot] != 0 {
            let position = Int(slots[slot]) - 1
            if children[position].name == name { return (slot, position) }
            slot = (slot + 1) & mask
        }
        return (slot, nil)
    }

    /// A power of two at least twice `names` (16 at least).
    private static func slotCount(for names: Int) -> Int {
        var count = 16
        while count < names * 2 { count *= 2 }
        return count
    }

    private mutating func rehash(to slotCount: Int, in children: [TreeChild]) {
        let old = slots
        slots = [UInt32](repeating: 0, count: slotCount)
        let mask = slotCount - 1
        for entry in old where entry != 0 {
            var slot = children[Int(entry) - 1].name.hashValue & mask
            while slots[slot] != 0 { slot = (slot + 1) & mask }
            slots[slot] = entry
        }
    }
}
