import Foundation
import OfflineEngine
import OfflineFUSE
import Logging
import Synchronization

/// Extended attributes (DESIGN §2, HARDENING test 8): read-only tables from `Xattrs`, and the
/// writable ones (the two toggles, the resume point and the watched mark) turned into library
/// commands. Never `ENOSYS` (it would disable xattrs for the whole mount): any name outside
/// `user.` is `ENOTSUP`, unknown `user.` names are `ENODATA`, other writes `EPERM`, bad
/// toggle values `EINVAL`.
/// Sizes and `ERANGE` are the binding's (it receives the whole value).
extension OfflineFileSystem {
    /// Every attribute of `inode` with its value (built once for a burst of calls).
    func attributeTable(_ inode: UInt64) -> Result<[(String, String)], Errno> {
        xattrTables.table(inode) { buildAttributeTable(inode) }
    }

    private func buildAttributeTable(_ inode: UInt64) -> Result<[(String, String)], Errno> {
        let snapshot = tree.snapshot
        switch NodeID(inode: inode) {
        case .itemFile(let id, let file)?:
            guard snapshot.itemFile(inode) != nil else { return .failure(.noSuchFileOrDirectory) }
            guard file == 0 else { return .success([]) }
            do {
                guard let item = try view.item(id: id), let source = try view.source(id: item.sourceID) else {
                    return .failure(.noSuchFileOrDirectory)
                }
                var table = Xattrs.item(item, source: source.name, categories: try view.categoryPaths(itemID: id),
                                        licence: try view.licence(itemID: id), isOpen: openFiles.library.isOpen(itemID: id))
                if item.type == .hls { table += hlsAttributes(itemID: id) }
                return .success(table)
            } catch {
                logger.error("cannot read item \(id)'s attributes: \(error)")
                return .failure(.ioError)
            }
        case .hidden?, .hlsPart?, .sourceArtwork?:
            return .success([])
        case let node?:
            guard snapshot.folders[inode] != nil else { return .failure(.noSuchFileOrDirectory) }
            // What the folder holds, its sub-folders' items included, each item once.
            let items = snapshot.items(under: inode)
            var source: Source?
            if case .source(let id) = node { source = try? view.source(id: id) }
            return .success(Xattrs.folder(items: items, source: source))
        case nil:
            return .failure(.noSuchFileOrDirectory)
        }
    }

    func doSetxattr(inode: UInt64, name: String, value: [UInt8]) -> Result<Void, Errno> {
        let commands: Result<[LibraryCommand], Errno>
        switch (name, NodeID(inode: inode)) {
        case (Xattrs.download, .itemFile(let id, 0)?):
            guard tree.snapshot.itemFile(inode) != nil else { return .failure(.noSuchFileOrDirectory) }
            guard let item = try? view.item(id: id) else { return .failure(.noSuchFileOrDirectory) }
            commands = Xattrs.downloadToggle(value, item: item)
        case (Xattrs.position, .itemFile(let id, 0)?), (Xattrs.watched, .itemFile(let id, 0)?):
            guard tree.snapshot.itemFile(inode) != nil else { return .failure(.noSuchFileOrDirectory) }
            commands = Xattrs.playStateWrite(name, value, itemID: id)
        case (Xattrs.subscribed, .source(let id)?):
            guard let source = try? view.source(id: id) else { return .failure(.noSuchFileOrDirectory) }
            commands = Xattrs.subscribedToggle(value, source: source)
        default:
            return .failure(.notPermitted)
        }
        switch commands {
        case .failure(let errno):
            let item: String? = if case .itemFile(let id, _)? = NodeID(inode: inode) { String(id) } else { nil }
            control.report(ControlLanguage.ParseError("bad value '\(Xattrs.toggleValue(value).prefix(40))' for \(name)"),
                           line: nil, origin: "setxattr", item: item)
            return .failure(errno)
        case .success(let list):
            var result: Result<Void, Errno> = .success(())
            for command in list {
                do {
                    _ = try performer.perform(command)
                } catch {
                    control.report(error, line: Array(ControlLanguage.format(command).utf8)[...], origin: "setxattr \(name)",
                                   item: command.itemReference)
                    result = .failure(EngineError.meansDiskFull(error) ? .noSpace : .invalidArgument)
                    break
                }
            }
            if !list.isEmpty { refreshNow() }
            return result
        }
    }
}

extension OfflineFileSystem {
    /// `user.offline.segments` (`present/total`), `user.offline.variant` and
    /// `user.offline.variants` (JSON) of an HLS item whose rendition is chosen.
    func hlsAttributes(itemID: Int64) -> [(String, String)] {
        guard let stream = hls.stream(itemID: itemID) else { return [] }
        var table: [(String, String)] = []
        if let progress = hlsStreams.segmentProgress(itemID: itemID) {
            table.append(("user.offline.segments", "\(progress.present)/\(progress.total)"))
        }
        let variant = stream.variantDescription
        if !variant.isEmpty { table.append(("user.offline.variant", variant)) }
        // Stored by the sync that prepared the item: no network here.
        if !stream.record.variants.isEmpty {
            table.append(("user.offline.variants", HLSVariantSummary.json(HLSVariantSummary.list(stream.record.variants,
                                                                                                  chosen: stream.record))))
        }
        return table
    }
}
