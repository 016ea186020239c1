import OfflineEngine
import OfflineFUSE

/// Answers given before the first tree is built, from a partial tree of the same builder
/// (`MountTree.partial`): only where it says exactly what the whole tree will, so the kernel
/// never caches an answer that changes when the build is done. Everything else, misses
/// too, waits for the tree (a miss here is never `ENOENT`).
extension OfflineFileSystem {
    /// Folders of the library (every folder lists its folders before its files, and the
    /// partial tree has them all but HLS ones), or an item's media file in its source's folder.
    func earlyEntry(parent: UInt64, name: FileName) -> Entry? {
        guard !tree.isBuilt else { return nil }  // every look-up of a running mount passes here
        let partial = tree.partial { view in
            guard case .source? = NodeID(inode: parent), let item = try view.itemOutline(fileName: name.description),
                  item.type != .hls, !(try TreeBuilder.mayBeHidden(item.fileName, isHLS: { try view.itemOutline(fileName: $0)?.type == .hls }))
            else { return nil }
            return item
        }
        guard let partial, let child = partial.folders[parent]?.child(named: name) else { return nil }
        if !child.isDirectory {
            guard case .itemFile(_, 0)? = NodeID(inode: child.inode), case .source? = NodeID(inode: parent) else { return nil }
        }
        return try? attributes(partial, child.inode).map(entry).get()
    }

    /// Attributes of a folder of the library or of a media file, as `earlyEntry` finds them.
    func earlyAttributes(_ inode: UInt64) -> (attributes: FileAttributes, timeout: Double)? {
        guard !tree.isBuilt else { return nil }
        let node = NodeID(inode: inode)
        let partial = tree.partial { view in
            guard case .itemFile(let id, 0)? = node, let item = try view.itemOutline(id: id), item.type != .hls else { return nil }
            return item
        }
        guard let partial, partial.folders[inode] != nil || partial.itemFile(inode) != nil else { return nil }
        return try? attributes(partial, inode).get()
    }
}
