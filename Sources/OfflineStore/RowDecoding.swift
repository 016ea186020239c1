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
            nextSyncAt: Date(dbTime: row["nextSyncAt"]), addedAt: Date(dbTime: row["addedAt"]) ?? Date(timeIntervalSince1970: 0))
    }
}

extension Item {
    init(row: Row) {
        self.init(
            id: row["id"], sourceID: row["sourceID"], contentID: row["contentID"], title: row["title"],
            type: ItemType(rawValue: row["type"]) ?? .file,
            mediaURL: row["mediaURL"], size: row["size"], mimeType: row["mimeType"], duration: row["duration"],
            publishedAt: Date(dbTime: row["publishedAt"]), summary: row["summary"], thumbnailURL: row["thumbnailURL"],
            subtitles: JSONText.decode([SubtitleTrack].self, from: row["subtitles"]) ?? [],
            sha256: row["sha256"], state: ItemState(rawValue: row["state"]) ?? .failed,
            error: (row["error"] as String?).flatMap(ItemErrorCode.init(rawValue:)), errorDetail: row["errorDetail"],
            requested: row["requested"], locked: row["locked"], bytesPresent: row["bytesPresent"],
            downloadedAt: Date(dbTime: row["downloadedAt"]), lastAccessAt: Date(dbTime: row["lastAccessAt"]),
            fileName: row["fileName"],
            addedAt: Date(dbTime: row["addedAt"]) ?? Date(timeIntervalSince1970: 0),
            updatedAt: Date(dbTime: row["updatedAt"]) ?? Date(timeIntervalSince1970: 0),
            inCatalog: row["inCatalog"], quality: row["quality"], partialSeconds: row["partialSeconds"])
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

extension HLSSegment {
    init(row: Row) {
        self.init(itemID: row["itemID"], sequence: row["sequence"], uri: row["uri"], duration: row["duration"],
                  byteRangeStart: row["byteRangeStart"], byteRangeLength: row["byteRangeLength"], size: row["size"],
                  present: row["present"])
    }
}

extension StoreEvent {
    init(row: Row) {
        self.init(seq: row["seq"], time: Date(dbTime: row["time"]) ?? Date(timeIntervalSince1970: 0),
                  kind: EventKind(rawValue: row["kind"]), itemID: row["itemID"], sourceID: row["sourceID"],
                  message: row["message"], details: row["details"])
    }
}
