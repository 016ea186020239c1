import Foundation
import OfflineEngine
import OfflineFUSE
import OfflineStore
import Logging
import Synchronization

/// The root's hidden files (DESIGN §2, HARDENING): `direct_io`, never kept in the page cache,
/// attributes never cached; size 0 except `.events`, whose real size and mtime let `tail -f`
/// follow it. Only `.control` can be written (mode 0644, the others 0444).
extension OfflineFileSystem {
    func hiddenAttributes(_ file: HiddenFile) -> Result<FileAttributes, Errno> {
        let snapshot = tree.snapshot
        var attributes = FileAttributes.file(inode: file.inode, permissions: file == .control ? 0o644 : 0o444, size: 0)
        attributes.uid = snapshot.uid
        attributes.gid = snapshot.gid
        attributes.setTimes(snapshot.folderTime)
        if file == .events {
            let (size, modified) = events.update()
            attributes.size = UInt64(size)
            attributes.blocks = (UInt64(size) + 511) / 512
            if size > 0 { attributes.setTimes(Timestamp(modified)) }
        }
        return .success(attributes)
    }

    func openHidden(_ file: HiddenFile, file info: FileInfo) -> Result<FileInfo, Errno> {
        if file != .control && (info.isWritable || info.flags & O_TRUNC != 0) { return .failure(.permissionDenied) }
        var answer = info
        answer.directIO = true
        answer.keepCache = false
        switch file {
        case .control:
            answer.handle = control.open()
        case .status, .statusJSON:
            let contents = renderStatus(json: file == .statusJSON)
            answer.handle = statusFiles.withLock { table in
                defer { table.next += 1 }
                table.open[table.next] = contents
                return table.next
            }
        case .events:
            answer.handle = 0
        }
        return .success(answer)
    }

    func readHidden(_ file: HiddenFile, handle: UInt64, offset: Int64, size: Int) -> [UInt8] {
        switch file {
        case .control: control.read(offset: offset, size: size)
        case .status, .statusJSON: statusFiles.withLock { $0.open[handle] ?? [] }.slice(offset: offset, size: size)
        case .events: events.read(offset: offset, size: size)
        }
    }

    func releaseHidden(_ file: HiddenFile, handle: UInt64) {
        switch file {
        case .control: control.release(handle: handle)
        case .status, .statusJSON: _ = statusFiles.withLock { $0.open.removeValue(forKey: handle) }
        case .events: break
        }
    }

    /// `.status` or `.status.json` now (store reads: local, bounded).
    func renderStatus(json: Bool) -> [UInt8] {
        let now = clock()
        let items: [ItemSummary]
        do {
            items = try store.items(matching: .all).map {
                var summary = try ItemSummary($0, licence: store.licence(itemID: $0.item.id))
                hlsStreams?.describe(&summary)
                return summary
            }
        } catch {
            logger.error("cannot read the library for .status: \(error)")
            return Array("cannot read the library: \(error)\n".utf8)
        }
        let rows = StatusFiles.rows(items, speeds: rates.sample(items, now: now))
        return json ? StatusFiles.json(rows, now: now) : Array(StatusFiles.table(rows, now: now).utf8)
    }
}
