import Foundation
import OfflineFUSE

/// Every name of one tree, each once and beside the inode it names, in one byte array. An
/// entry is the inode (8 bytes; the top bit, which no inode uses, marks a folder), the name's
/// length (2 bytes) and its bytes. Folders and items refer to an entry by its offset.
///
/// Why not a `FileName` in each folder's child: each name was a heap array (a 32-byte header
/// and malloc's rounding on a ~50-byte name), and every folder listing an item held the
/// inode, a reference and a flag again (32 bytes a child). Here a child is 4 bytes.
struct NameTable: Sendable {
    typealias Entry = UInt32
    private(set) var bytes: [UInt8] = []
    private static let directoryBit: UInt64 = 1 << 63
    private static let headerSize = 10

    /// Adds a name; a name past 65,535 bytes is cut (the kernel takes 255 at most, so no
    /// request can name it either way).
    mutating func append(_ name: some Sequence<UInt8>, inode: UInt64, isDirectory: Bool) -> Entry {
        precondition(inode & Self.directoryBit == 0 && bytes.count < Int(UInt32.max) - 0x2_0000, "an inode and a name that fit")
        let entry = Entry(bytes.count)
        withUnsafeBytes(of: (isDirectory ? inode | Self.directoryBit : inode).littleEndian) { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: [0, 0])
        bytes.append(contentsOf: name)
        let length = min(bytes.count - Int(entry) - Self.headerSize, Int(UInt16.max))
        bytes.removeLast(bytes.count - Int(entry) - Self.headerSize - length)
        withUnsafeBytes(of: UInt16(length).littleEndian) { bytes.replaceSubrange(Int(entry) + 8..<Int(entry) + 10, with: $0) }
        return entry
    }

    mutating func reserveCapacity(_ count: Int) { bytes.reserveCapacity(count) }

    /// Gives back the room a build reserved and did not use (the table is most of a tree).
    mutating func shrink() {
        guard bytes.capacity - bytes.count > bytes.count / 16 else { return }
        bytes = [UInt8](unsafeUninitializedCapacity: bytes.count) { buffer, count in
            count = bytes.withUnsafeBufferPointer { buffer.initialize(fromContentsOf: $0) }
        }
    }

    /// Room for an entry of a name of `nameBytes` bytes.
    static func size(ofName nameBytes: Int) -> Int { headerSize + nameBytes }

    func inode(_ entry: Entry) -> UInt64 { header(entry) & ~Self.directoryBit }

    func isDirectory(_ entry: Entry) -> Bool { header(entry) & Self.directoryBit != 0 }

    /// The entry added after `entry` (an item's files are added one after the other).
    func entry(after entry: Entry) -> Entry { entry + Entry(Self.headerSize) + Entry(withName(entry) { $0.count }) }

    func name(_ entry: Entry) -> FileName { FileName(bytes: withName(entry) { Array($0) }) }

    func child(_ entry: Entry) -> TreeChild { TreeChild(name: name(entry), inode: inode(entry), isDirectory: isDirectory(entry)) }

    /// The name's hash, as `FileName.hashValue` has it.
    func hash(_ entry: Entry) -> Int {
        withName(entry) { name in
            var hasher = Hasher()
            hasher.combine(bytes: name)
            return hasher.finalize()
        }
    }

    func name(_ entry: Entry, is name: FileName) -> Bool {
        withName(entry) { mine in name.bytes.withUnsafeBytes { Self.equal(mine, $0) } }
    }

    /// Whether `entry` here and `other` in `table` have the same name (and, unless
    /// `namesOnly`, the same inode and kind).
    func same(_ entry: Entry, as other: Entry, in table: NameTable, namesOnly: Bool = false) -> Bool {
        guard namesOnly || header(entry) == table.header(other) else { return false }
        return withName(entry) { mine in table.withName(other) { Self.equal(mine, $0) } }
    }

    private func header(_ entry: Entry) -> UInt64 {
        bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: Int(entry), as: UInt64.self)) }
    }

    private func withName<Result>(_ entry: Entry, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        bytes.withUnsafeBytes { all in
            let start = Int(entry) + Self.headerSize
            let length = Int(UInt16(littleEndian: all.loadUnaligned(fromByteOffset: start - 2, as: UInt16.self)))
            return body(UnsafeRawBufferPointer(rebasing: all[start..<start + length]))
        }
    }

    private static func equal(_ left: UnsafeRawBufferPointer, _ right: UnsafeRawBufferPointer) -> Bool {
        left.count == right.count && (left.count == 0 || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0)
    }
}
