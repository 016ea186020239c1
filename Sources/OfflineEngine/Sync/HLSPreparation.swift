import Dispatch
import OfflineStore

extension HLSStreams {
    /// Chooses a rendition for each of the source's HLS items that has none yet, as a
    /// download would (the item's stored quality, else the highest `file-size-max` allows),
    /// and keeps its playlists: the mount's `.m3u8` then has its size when listed and reads
    /// offline. The choice is recorded as the default (quality nil), not as the user's.
    ///
    /// One item at a time (resolutions share one lock, so a player opening a new playlist
    /// waits for at most one of these). Blocking (network). Returns one warning per item
    /// that could not be prepared; the mount resolves those when first opened.
    func prepare(sourceID: Int64) -> [String] {
        guard let itemIDs = try? store.hlsItemsWithoutStream(sourceID: sourceID), !itemIDs.isEmpty else { return [] }
        let maxBytes = (try? store.policies())?.fileSizeMax.bytes
        var warnings: [String] = []
        for itemID in itemIDs {
            if let failure = prepare(itemID: itemID, maxBytes: maxBytes) {
                warnings.append("HLS item \(itemID): playlist not prepared: \(failure.message)")
            }
        }
        return warnings
    }

    /// Chooses again, in the background, for an item whose choice a `cancel` or a failed
    /// download just forgot: its `.m3u8` is listed with its size again at once instead of as
    /// an empty file until the next sync (copiers copy it empty; mpv waits on it).
    public func prepareInBackground(itemID: Int64) {
        background.async { [self] in _ = prepare(itemID: itemID, maxBytes: (try? store.policies())?.fileSizeMax.bytes) }
    }

    private func prepare(itemID: Int64, maxBytes: Int64?) -> HLSFailure? {
        let item = try? store.item(id: itemID)
        do {
            _ = try resolve(itemID: itemID, quality: item?.quality, audio: item?.audioLanguages, maxBytes: maxBytes)
            return nil
        } catch {
            return error
        }
    }
}
