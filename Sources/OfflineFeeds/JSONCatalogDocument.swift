import Foundation

// The JSON catalog as Decodable types. JSONDecoder keeps a compact map of the document
// and builds only these structs; JSONSerialization's object tree took ~18 times the
// document's size in memory. Every type here decodes leniently (its initializer never
// throws), so one wrong field costs that field, not the catalog.

/// A string field; a number is accepted and written without a fraction when integral.
struct LenientString: Decodable {
    var value: String?

    init(from decoder: any Decoder) {
        guard let container = try? decoder.singleValueContainer() else { return }
        if let text = try? container.decode(String.self) {
            value = text
        } else if let number = try? container.decode(Double.self), number.isFinite {
            value = number.rounded() == number && abs(number) < 1e15 ? String(Int64(number)) : String(number)
        }
    }
}

/// A number field; a numeric string is accepted. `text` keeps a string as written
/// (durations may be `"01:02:03"`).
struct LenientNumber: Decodable {
    var value: Double?
    var text: String?

    init(from decoder: any Decoder) {
        guard let container = try? decoder.singleValueContainer() else { return }
        if let number = try? container.decode(Double.self) {
            value = number.isFinite ? number : nil
        } else if let string = try? container.decode(String.self) {
            text = string
            value = Double(FeedText.trimmed(string)).flatMap { $0.isFinite ? $0 : nil }
        }
    }

    var int64: Int64? {
        guard let value, value.rounded() == value, abs(value) < 9e18 else { return nil }
        return Int64(value)
    }
}

/// Decodes `T` if the value is an object of that shape, else records that it was not.
struct LenientObject<T: Decodable>: Decodable {
    var value: T?

    init(from decoder: any Decoder) {
        value = try? T(from: decoder)
    }
}

struct CatalogSource: Decodable {
    var title: LenientString?
    var description: LenientString?
    var link: LenientString?
    var image: LenientString?
}

struct CatalogCategory: Decodable {
    var id: LenientString?
    var name: LenientString?
    var parent: LenientString?
}

struct CatalogSubtitle: Decodable {
    var language: LenientString?
    var url: LenientString?
    var format: LenientString?
    var size: LenientNumber?
}

struct CatalogLicence: Decodable {
    var kind: LenientString?
    var rentalDuration: LenientNumber?
    var playDuration: LenientNumber?
    var url: LenientString?
}

struct CatalogItem: Decodable {
    enum CodingKeys: String, CodingKey {
        case id, title, type, url, size, mimeType, duration, published, description, thumbnail, thumbnailSize, subtitles,
            sha256, categories, licence, license
    }

    /// False when the array element was not an object at all.
    var isObject = true
    var id: LenientString?
    var title: LenientString?
    var type: LenientString?
    var url: LenientString?
    var size: LenientNumber?
    var mimeType: LenientString?
    var duration: LenientNumber?
    var published: LenientNumber?
    var description: LenientString?
    var thumbnail: LenientString?
    var thumbnailSize: LenientNumber?
    var subtitles: [LenientObject<CatalogSubtitle>]?
    var sha256: LenientString?
    var categories: [LenientString]?
    /// nil: no licence; `.some(nil)`: a licence member that is not an object.
    var licence: LenientObject<CatalogLicence>?

    init(from decoder: any Decoder) {
        guard let c = try? decoder.container(keyedBy: CodingKeys.self) else {
            isObject = false
            return
        }
        id = try? c.decodeIfPresent(LenientString.self, forKey: .id)
        title = try? c.decodeIfPresent(LenientString.self, forKey: .title)
        type = try? c.decodeIfPresent(LenientString.self, forKey: .type)
        url = try? c.decodeIfPresent(LenientString.self, forKey: .url)
        size = try? c.decodeIfPresent(LenientNumber.self, forKey: .size)
        mimeType = try? c.decodeIfPresent(LenientString.self, forKey: .mimeType)
        duration = try? c.decodeIfPresent(LenientNumber.self, forKey: .duration)
        published = try? c.decodeIfPresent(LenientNumber.self, forKey: .published)
        description = try? c.decodeIfPresent(LenientString.self, forKey: .description)
        thumbnail = try? c.decodeIfPresent(LenientString.self, forKey: .thumbnail)
        thumbnailSize = try? c.decodeIfPresent(LenientNumber.self, forKey: .thumbnailSize)
        subtitles = try? c.decodeIfPresent([LenientObject<CatalogSubtitle>].self, forKey: .subtitles)
        sha256 = try? c.decodeIfPresent(LenientString.self, forKey: .sha256)
        categories = try? c.decodeIfPresent([LenientString].self, forKey: .categories)
        licence =
            (try? c.decodeIfPresent(LenientObject<CatalogLicence>.self, forKey: .licence))
            ?? (try? c.decodeIfPresent(LenientObject<CatalogLicence>.self, forKey: .license))
    }
}

/// A catalog page or a lookup document.
struct CatalogDocument: Decodable {
    enum CodingKeys: String, CodingKey {
        case offlinefs, source, categories, items, item, next, lookup
    }

    static let maxItemsKey = CodingUserInfoKey(rawValue: "offlinefs.maxItems")!

    var version: LenientNumber?
    var source: CatalogSource?
    var categories: [LenientObject<CatalogCategory>] = []
    var items: [CatalogItem] = []
    /// Set instead of decoding `items` when there are more than the limit.
    var itemCountOverLimit: Int?
    var itemsIsNotArray = false
    var item: CatalogItem?
    var next: LenientString?
    var lookup: LenientString?

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        version = try? c.decodeIfPresent(LenientNumber.self, forKey: .offlinefs)
        guard version != nil else { return }  // not a catalog: the caller reports it
        source = try? c.decodeIfPresent(CatalogSource.self, forKey: .source)
        categories = (try? c.decodeIfPresent([LenientObject<CatalogCategory>].self, forKey: .categories)) ?? []
        if c.contains(.items) {
            if var list = try? c.nestedUnkeyedContainer(forKey: .items) {
                let limit = decoder.userInfo[Self.maxItemsKey] as? Int ?? Int.max
                // Count first, so a hostile catalog is refused before its items are built.
                if let count = list.count, count > limit {
                    itemCountOverLimit = count
                } else {
                    while !list.isAtEnd {
                        guard let element = try? list.decode(CatalogItem.self) else { break }
                        items.append(element)
                    }
                }
            } else if (try? c.decodeNil(forKey: .items)) != true {
                itemsIsNotArray = true
            }
        }
        item = try? c.decodeIfPresent(CatalogItem.self, forKey: .item)
        next = try? c.decodeIfPresent(LenientString.self, forKey: .next)
        lookup = try? c.decodeIfPresent(LenientString.self, forKey: .lookup)
    }
}
