import Dispatch
import Foundation
import OfflineEngine
import OfflineFUSE
import Logging
import Synchronization

/// The root's hidden files (DESIGN §2, HARDENING): `direct_io`, never kept in the page cache,
/// attributes never cached. `.status` and `.status.json` report the size of the snapshot their
/// `getattr` takes, which an open soon after serves (`StatusSnapshots`: `rsync`, `tar`,
/// `sendfile` and Samba copy exactly `st_size` bytes); `.events` has its real size and mtime, so `tail -f`
/// follows it; `.control` reads as its reference, and has its size. Only `.control` can be
/// written (mode 0644, the others 0444).
extension OfflineFileSystem {
    func hiddenAttributes(_ file: HiddenFile) -> Result<FileAttributes, Errno> {
        let snapshot = tree.snapshot
        var attributes = FileAttributes.file(inode: file.inode, permissions: file == .control ? 0o644 : 0o444, size: 0)
        attributes.uid = snapshot.uid
        attributes.gid = snapshot.gid
        attributes.setTimes(snapshot.folderTime)
        var size: Int64 = 0
        switch file {
        case .events:
            let (eventsSize, modified) = events.update()
            size = eventsSize
            if size > 0 { attributes.setTimes(Timestamp(modified)) }
        case .status, .statusJSON:
            size = Int64(statusSnapshot(json: file == .statusJSON).count)
        case .control:
            // What a read shows (the command reference), so a copy holds it too.
            size = Int64(ControlFile.reference.count)
        }
        attributes.size = UInt64(size)
        attributes.blocks = (UInt64(size) + 511) / 512
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
            let contents = statusSnapshot(json: file == .statusJSON)
            answer.handle = statusFiles.withLock { $0.open(contents) }
        case .events:
            answer.handle = 0
        }
        return .success(answer)
    }

    func readHidden(_ file: HiddenFile, handle: UInt64, offset: Int64, size: Int) -> [UInt8] {
        switch file {
        case .control: control.read(offset: offset, size: size)
        case .status, .statusJSON: statusFiles.withLock { $0.contents(handle) }.slice(offset: offset, size: size)
        case .events: events.read(offset: offset, size: size)
        }
    }

    func releaseHidden(_ file: HiddenFile, handle: UInt64) {
        switch file {
        case .control: control.release(handle: handle)
        case .status, .statusJSON: statusFiles.withLock { $0.close(handle) }
        case .events: break
        }
    }

    /// The latest snapshot of `.status` or `.status.json`, or a new one (`StatusSnapshots`).
    func statusSnapshot(json: Bool) -> [UInt8] {
        switch statusFiles.withLock({ $0.answer(json: json) }) {
        case .serve(let contents):
            return contents
        case .serveAndRefresh(let contents):
            DispatchQueue.global(qos: .utility).async { [self] in _ = renderSnapshot(json: json) }
            return contents
        case .render:
            return renderSnapshot(json: json)
        }
    }

    private func renderSnapshot(json: Bool) -> [UInt8] {
        let start = ContinuousClock.now
        let contents = renderStatus(json: json)
        statusFiles.withLock { $0.keep(contents, json: json, cost: .now - start) }
        return contents
    }

    /// `.status` or `.status.json` now (store reads: local, bounded).
    func renderStatus(json: Bool) -> [UInt8] {
        let now = clock()
        let items: [ItemSummary]
        do {
            items = try view.statusSummaries(hls: hlsStreams)
        } catch {
            logger.error("cannot read the library for .status: \(error)")
            return Array("cannot read the library: \(error)\n".utf8)
        }
        let rows = StatusReport.rows(items, speeds: downloadSpeeds())
        return json ? StatusReport.json(rows, now: now) : Array(StatusReport.table(rows, now: now).utf8)
    }
}
