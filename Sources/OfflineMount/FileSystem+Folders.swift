import Foundation
import OfflineEngine
public import OfflineFUSE
import Synchronization

/// Folder listings: each open folder pages through the tree it was opened with
/// (`directories`), and a listing warms a connection to its items' origin and writes their
/// desktop thumbnails after it is answered.
extension OfflineFileSystem {
    public func opendir(inode: UInt64, file: FileInfo, reply: Reply<FileInfo>) {
        if case .hlsItemFolder(_, let itemID)? = NodeID(inode: inode) {
            // A program listing a stream's parts will stat them next: their sizes first.
            return hls.learnPartSizes(itemID: itemID) { [self] in reply.complete(doOpendir(inode: inode, file: file)) }
        }
        let answer = doOpendir(inode: inode, file: file)
        // Taken before the reply: once answered, a program may list the folder and close it
        // before this thread goes on.
        var listing: (TreeSnapshot, TreeFolder)?
        if case .success(let opened) = answer { listing = openDirectory(opened.handle) }
        reply.complete(answer)
        // After the reply: the listing waits for none of this.
        if let (snapshot, folder) = listing {
            expectReads(in: folder)
            desktopThumbnails.withLock { $0 }?.folderListed(inode, in: snapshot)
        }
    }

    /// A listing is often followed by a read of one of its items (a file manager shows a
    /// folder, its user plays a file): the engine may open a connection to their origin now
    /// (`RangeFetcher.expectReads`). A few of the first media files are enough, since a
    /// folder's items mostly share an origin.
    func expectReads(in folder: TreeFolder) {
        var itemIDs: [Int64] = []
        for child in folder.children.prefix(256) where !child.isDirectory {
            guard case .itemFile(let itemID, file: 0)? = NodeID(inode: child.inode) else { continue }
            itemIDs.append(itemID)
            if itemIDs.count == 4 { break }
        }
        if !itemIDs.isEmpty { openFiles.library.expectReads(itemIDs: itemIDs) }
    }

    public func readdir(inode: UInt64, size: Int, offset: Int64, file: FileInfo, reply: Reply<[DirectoryEntry]>) {
        guard let (_, folder) = openDirectory(file.handle) else { return reply.fail(.badFileDescriptor) }
        reply.succeed(listing(folder, from: offset).lazy.map { name, inode, isDirectory, next in
            DirectoryEntry(name: name, inode: inode, mode: isDirectory ? UInt32(S_IFDIR) : UInt32(S_IFREG), nextOffset: next)
        })
    }

    public func readdirplus(inode: UInt64, size: Int, offset: Int64, file: FileInfo, reply: Reply<[DirectoryEntryPlus]>) {
        guard let (snapshot, folder) = openDirectory(file.handle) else { return reply.fail(.badFileDescriptor) }
        reply.succeed(listing(folder, from: offset).lazy.compactMap { [self] name, inode, _, next in
            guard case .success(let found) = attributes(snapshot, inode) else { return nil }
            return DirectoryEntryPlus(name: name, entry: entry(found), nextOffset: next)
        })
    }

    public func releasedir(inode: UInt64, file: FileInfo, reply: Reply<Void>) {
        _ = directories.withLock { $0.open.removeValue(forKey: file.handle) }
        reply.succeed()
    }

    func doOpendir(inode: UInt64, file: FileInfo) -> Result<FileInfo, Errno> {
        let snapshot = tree.snapshot
        guard var folder = snapshot.folders[inode] else {
            return .failure(snapshot.itemFile(inode) != nil ? .notDirectory : .noSuchFileOrDirectory)
        }
        if case .hlsItemFolder(_, let itemID)? = NodeID(inode: inode) {
            folder = hls.folder(inode, parent: folder.parent, itemID: itemID)
        }
        var answer = file
        answer.handle = directories.withLock { directories in
            defer { directories.next += 1 }
            directories.open[directories.next] = (snapshot, folder)
            return directories.next
        }
        return .success(answer)
    }

    func openDirectory(_ handle: UInt64) -> (TreeSnapshot, TreeFolder)? {
        directories.withLock { $0.open[handle] }
    }

    /// `.`, `..`, then the children, from cookie `offset`: the cookie of entry `i` (0-based,
    /// counting `.` and `..`) is `i + 1`.
    func listing(_ folder: TreeFolder, from offset: Int64)
        -> some Sequence<(name: FileName, inode: UInt64, isDirectory: Bool, next: Int64)> {
        let start = max(0, Int(clamping: offset))
        return (start..<(folder.children.count + 2)).lazy.map { index in
            switch index {
            case 0: return (FileName("."), folder.inode, true, 1)
            case 1: return (FileName(".."), folder.parent, true, 2)
            default:
                let child = folder.children[index - 2]
                return (child.name, child.inode, child.isDirectory, Int64(index + 1))
            }
        }
    }
}

extension Reply where Value == FileInfo {
    func complete(_ result: Result<FileInfo, Errno>) {
        switch result {
        case .success(let file): succeed(file)
        case .failure(let errno): fail(errno)
        }
    }
}
