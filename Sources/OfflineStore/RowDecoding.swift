import Foundation
internal import GRDB

// Records are plain public structs; GRDB stays internal. These initializers read a row of
// `SELECT *` (or the named columns) into them. Unknown enum spellings cannot occur (CHECK
// constraints), but decoding still falls back instead of trapping.

extension Source {
    init(row: Row) {
        self.init(
            id: row["id"], name: row["name"], title: row["title"], feedURL: row["feedURL"],
            kind: (row["kind"] as String?).flatMap(FeedKind.init(rawValue:)),
            subscribed: row["subscribed"], etag: row["etag"], lastModified: row["lastModified"],
            lastSyncAt: Date(dbTime: row["lastSyncAt"]), lastSyncError: row["lastSyncError"],
            nextSyncAt: Date(dbTime: row["nextSyncAt"]), addedAt: Date(dbTime: row["addedAt"]) ?? Date(timeIntervalSince1970: 0),
            imageURL: row["imageURL"], imageChangedAt: Date(dbTime: row["imageChangedAt"]))
    }
}

extension Item {
    /// The columns `init(row:)` reads, in order. Decoding by index: GRDB's lookup by name
    /// lower-cases the name on every access, which dominated 100k-row listings.
    static let columns = """
        item.id, item.sourceID, item.contentID, item.title, item.type, item.mediaURL, item.size, item.mimeType,
        item.duration, item.publishedAt, item.summary, item.thumbnailURL, item.subtitles, item.sha256, item.state,
        item.error, item.errorDetail, item.requested, item.locked, item.bytesPresent, item.downloadedAt,
        item.lastAccessAt, item.fileName, item.addedAt, item.updatedAt, item.inCatalog, item.quality, item.partialSeconds,
        item.thumbnailSize, item.position, item.watchedAt, item.lastPlayedAt, item.audioLanguages, item.mediaChangedAt,
        item.sidesChangedAt, item.requestedAt
        """

    /// How many `columns` there are: the index of the first column after them.
    static let columnCount = 36

    /// Reads a row that starts with `Item.columns`.
    init(row: Row) {
        self.init(
            id: row[0], sourceID: row[1], contentID: row[2], title: row[3],
            type: ItemType(rawValue: row[4]) ?? .file,
            mediaURL: row[5], size: row[6], mimeType: row[7], duration: row[8],
            publishedAt: Date(dbTime: row[9]), summary: row[10], thumbnailURL: row[11],
            subtitles: (row[12] as String?).flatMap { JSONText.decode([SubtitleTrack].self, from: $0) } ?? [],
            sha256: row[13], state: ItemState(rawValue: row[14]) ?? .failed,
            error: (row[15] as String?).flatMap(ItemErrorCode.init(rawValue:)), errorDetail: row[16],
            requested: row[17], locked: row[18], bytesPresent: row[19],
            downloadedAt: Date(dbTime: row[20]), lastAccessAt: Date(dbTime: row[21]),
            fileName: row[22],
            addedAt: Date(dbTime: row[23]) ?? Date(timeIntervalSince1970: 0),
            updatedAt: Date(dbTime: row[24]) ?? Date(timeIntervalSince1970: 0),
            inCatalog: row[25], quality: row[26], partialSeconds: row[27], audioLanguages: row[32],
            thumbnailSize: row[28], position: row[29], watchedAt: Date(dbTime: row[30]), lastPlayedAt: Date(dbTime: row[31]),
            mediaChangedAt: Date(dbTime: row[33]), sidesChangedAt: Date(dbTime: row[34]), requestedAt: Date(dbTime: row[35]))
    }
}

extension Licence {
    init(row: Row) {
        self.init(
            itemID: row["itemID"],
            terms: LicenceTerms(kind: LicenceKind(rawValue: row["kind"]) ?? .rental, rentalDuration: row["rentalDuration"],
                                playDuration: row["playDuration"], licenceURL: row["licenceURL"]),
            acquiredAt: Date(dbTime: row["acquiredAt"]), firstPlayedAt: Date(dbTime: row["firstPlayedAt"]),
            expiresAt: Date(dbTime: row["expiresAt"]), key: row["key"])
    }
}

extension StoreEvent {
    init(row: Row) {
        self.init(seq: row["seq"], time: Date(dbTime: row["time"]) ?? Date(timeIntervalSince1970: 0),
                  kind: EventKind(rawValue: row["kind"]), itemID: row["itemID"], sourceID: row["sourceID"],
                  message: row["message"], details: row["details"])
    }
}
