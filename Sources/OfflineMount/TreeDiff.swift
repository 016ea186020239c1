public import OfflineFUSE

/// The kernel notifications that make a new tree visible at once (DESIGN §2 "Change
/// notification"): changed folders lose their cached listing, vanished or moved names their
/// cached entry, new names their cached miss, and items whose size, time or state changed their cached attributes (and
/// their cached data when the size changed).
public enum TreeDiff {
    public static func notifications(from old: TreeSnapshot, to new: TreeSnapshot) -> [Notifier.Notification] {
        var result: [Notifier.Notification] = []
        for (inode, before) in old.folders {
            guard let after = new.folders[inode] else {
                result.append(.invalidateInode(inode: inode, offset: 0, length: 0))
                continue
            }
            guard before.children != after.children else { continue }
            result.append(.invalidateInode(inode: inode, offset: 0, length: 0))
            for child in before.children where after.child(named: child.name)?.inode != child.inode {
                result.append(.invalidateEntry(parent: inode, name: child.name))
            }
            // New names too: the kernel may hold a cached miss (negative entry) for them.
            for child in after.children where before.child(named: child.name) == nil {
                result.append(.invalidateEntry(parent: inode, name: child.name))
            }
        }
        for before in old.items {
            let id = before.id
            guard let after = new.items[id], after != before else { continue }
            // A negative offset drops the attributes only: cached bytes stay valid unless the
            // size moved. Side files' attributes too: their link count follows the item's folders.
            for file in 0..<max(before.files.count, after.files.count, 1) {
                let inode = NodeID.itemFile(itemID: id, file: file).inode
                let sizeChanged = file == 0 ? after.size != before.size
                    : before.files.indices.contains(file) && after.files.indices.contains(file)
                        && before.files[file].size != after.files[file].size
                result.append(.invalidateInode(inode: inode, offset: sizeChanged ? 0 : -1, length: 0))
            }
        }
        return result
    }
}
