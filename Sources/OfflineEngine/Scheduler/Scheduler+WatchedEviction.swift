import Foundation
import OfflineStore

extension Scheduler {
    /// Policy `delete-watched-after`: evicts the media of items marked watched that long ago,
    /// like `evict` (the item stays listed; thumbnail and subtitles kept). Locked items never;
    /// an open one once it is closed (checked again a minute on).
    func evictWatched(now: Date, after delay: TimeInterval?, wakeAt: inout [Date]) {
        guard let delay, let (due, nextMark) = try? store.watchedEvictions(cutoff: now.addingTimeInterval(-delay)) else { return }
        if let nextMark { wakeAt.append(nextMark.addingTimeInterval(delay)) }
        for item in due {
            if transfers.fetcher.isOpen(itemID: item.id) || runningItems.contains(item.id) {
                wakeAt.append(now.addingTimeInterval(60))
                continue
            }
            guard (try? apply(.evict(sideFiles: false), to: item)) != nil else { continue }
            _ = try? store.appendEvent(kind: .state, itemID: item.id, sourceID: item.sourceID,
                                       message: "\(item.fileName ?? item.contentID): evicted, watched \(LicenceClock.iso(item.watchedAt ?? now)) (delete-watched-after)")
        }
    }
}
