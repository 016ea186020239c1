import Foundation

/// What a file listing shows of an item (the mount's tree): its file name, size, times, state,
/// side files and the folders it is in, without the rest of the record.
public struct ItemOutline: Sendable, Hashable {
    // In this order for a million of them (a first build of a large library holds them all at
    // once): the one-byte fields sit in the byte after `size`'s tag, which would be padding.
    public var id: Int64
    public var sourceID: Int64
    /// See `Item.fileName`; an outline always has one.
    public var fileName: String
    /// Bytes, when known.
    public var size: Int64?
    public var type: ItemType
    public var state: ItemState
    /// The catalog gives a thumbnail.
    public var hasThumbnail: Bool
    /// Marked watched (`Item.watchedAt`): not in `unwatched/`.
    public var watched: Bool = false
    /// A failed item with no file name (its content-id lookup failed): `fileName` is
    /// `FileNaming.contentIDName`, and it is listed in `state/failed/` only.
    public var namedByContentID = false
    /// Bytes of the media present in the cache.
    public var bytesPresent: Int64
    public var publishedAt: Date?
    public var downloadedAt: Date?
    public var addedAt: Date
    /// The change times as seconds (0: never): two `Date?` would take 32 bytes.
    private var mediaChangedSeconds: Double = 0
    private var sidesChangedSeconds: Double = 0
    /// Its bytes, when known (`Item.thumbnailSize`).
    public var thumbnailSize: Int64?
    /// With their sizes when known.
    public var subtitles: [SubtitleTrack]
    /// Its categories (ids of `LibraryStore.categories()`), in no particular order.
    public var categoryIDs: [Int64]
    /// When a playback last ended (`Item.lastPlayedAt`): the media's access time.
    public var lastPlayedAt: Date? = nil

    /// `Item.mediaChangedAt` and `Item.sidesChangedAt`.
    public var mediaChangedAt: Date? {
        get { mediaChangedSeconds == 0 ? nil : Date(timeIntervalSince1970: mediaChangedSeconds) }
        set { mediaChangedSeconds = newValue?.timeIntervalSince1970 ?? 0 }
    }
    public var sidesChangedAt: Date? {
        get { sidesChangedSeconds == 0 ? nil : Date(timeIntervalSince1970: sidesChangedSeconds) }
        set { sidesChangedSeconds = newValue?.timeIntervalSince1970 ?? 0 }
    }
    /// The media file's time: the publish time, which no download or state change moves, or
    /// a later change of the media at its origin (`Item.mediaChangedAt`).
    public var mediaTime: Date { max(publishedAt ?? addedAt, mediaChangedAt ?? .distantPast) }
    /// The side files' time: as the media's, or a later change of what they are made of.
    public var sidesTime: Date { max(mediaTime, sidesChangedAt ?? .distantPast) }

    public init(id: Int64, sourceID: Int64, fileName: String, type: ItemType, state: ItemState, size: Int64?,
                bytesPresent: Int64, publishedAt: Date?, downloadedAt: Date?, addedAt: Date, hasThumbnail: Bool,
                thumbnailSize: Int64? = nil, subtitles: [SubtitleTrack] = [], categoryIDs: [Int64] = []) {
        self.id = id
        self.sourceID = sourceID
        self.fileName = fileName
        self.type = type
        self.state = state
        self.size = size
        self.bytesPresent = bytesPresent
        self.publishedAt = publishedAt
        self.downloadedAt = downloadedAt
        self.addedAt = addedAt
        self.hasThumbnail = hasThumbnail
        self.thumbnailSize = thumbnailSize
        self.subtitles = subtitles
        self.categoryIDs = categoryIDs
    }

    /// The outline of a full item, or nil when it has no file name yet (`metadata-pending`).
    /// A failed item with no file name is named by its content id (`namedByContentID`).
    public init?(_ item: Item, categoryIDs: [Int64] = []) {
        let namedByContentID = item.fileName == nil && item.state == .failed
        guard let fileName = item.fileName ?? (namedByContentID ? FileNaming.contentIDName(item.contentID) : nil) else {
            return nil
        }
        self.init(id: item.id, sourceID: item.sourceID, fileName: fileName, type: item.type, state: item.state,
                  size: item.size, bytesPresent: item.bytesPresent, publishedAt: item.publishedAt,
                  downloadedAt: item.downloadedAt, addedAt: item.addedAt, hasThumbnail: item.thumbnailURL != nil,
                  thumbnailSize: item.thumbnailSize, subtitles: item.subtitles, categoryIDs: categoryIDs)
        watched = item.watched
        lastPlayedAt = item.lastPlayedAt
        mediaChangedAt = item.mediaChangedAt
        sidesChangedAt = item.sidesChangedAt
        self.namedByContentID = namedByContentID
    }
}
