import Foundation
import OfflineFeeds
import Testing

@Suite struct JSONCatalogParserTests {
    static let base = URL(string: "https://acme.example/catalog/catalog-page1.json")!

    @Test func catalogPageWithNestedCategories() throws {
        // Given the first page of a catalog with a three-level category tree
        let feed = try FeedParser.parse(FeedFixtures.data("catalog-page1.json"), baseURL: Self.base)

        // Then the source fields, paging and lookup are read and resolved
        #expect(feed.kind == .json)
        #expect(feed.title == "Acme Media")
        #expect(feed.description == "Everything Acme publishes.")
        #expect(feed.link == "https://acme.example/")
        #expect(feed.imageURL == "https://acme.example/img/acme.png")
        #expect(feed.nextPageURL == "https://acme.example/catalog/catalog-page2.json")
        #expect(feed.lookupTemplate == "https://acme.example/api/items/{id}")
        #expect(feed.categories == [["News"], ["News", "Local"], ["News", "Local", "Downtown"], ["Family"]])
        #expect(feed.warnings.isEmpty)

        // And every item field
        #expect(feed.items.count == 3)
        let first = feed.items[0]
        #expect(first.contentID == "ep-001")
        #expect(first.title == "Launch Day")
        #expect(first.type == .video)
        #expect(first.mediaURL == "https://cdn.acme.example/ep-001.mp4")
        #expect(first.size == 1_048_576)
        #expect(first.mimeType == "video/mp4")
        #expect(first.duration == 125.5)
        #expect(first.publishedAt == Date(timeIntervalSince1970: 1_714_566_600))
        #expect(first.summary == "The launch.")
        #expect(first.thumbnailURL == "https://acme.example/catalog/thumbs/ep-001.jpg")
        #expect(first.subtitles == [
            SubtitleTrack(language: "en", url: "https://acme.example/catalog/subs/ep-001.en.vtt", format: .vtt),
            SubtitleTrack(language: "fr", url: "https://acme.example/catalog/subs/ep-001.fr.srt", format: .srt),
        ])
        #expect(first.sha256 == "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08")
        #expect(first.categories == [["News", "Local", "Downtown"], ["Family"]])
        #expect(first.licence == LicenceTerms(kind: .rental, rentalDuration: 172_800, playDuration: 86_400, licenceURL: "https://acme.example/licence/ep-001"))

        // A numeric id, a type guessed from the MIME type, a purchase licence
        let second = feed.items[1]
        #expect(second.contentID == "2")
        #expect(second.type == .hls)
        #expect(second.licence == LicenceTerms(kind: .purchase))
        #expect(second.categories == [["News"]])

        // Loosely typed fields: size as a string, duration as HH:MM:SS, an RFC 822 date
        let third = feed.items[2]
        #expect(third.type == .audio)
        #expect(third.size == 4096)
        #expect(third.duration == 3600)
        #expect(third.publishedAt == Date(timeIntervalSince1970: 1_714_566_600))
        #expect(third.licence == nil)
    }

    @Test func lastPageHasNoNext() throws {
        let feed = try FeedParser.parse(FeedFixtures.data("catalog-page2.json"), baseURL: Self.base)
        #expect(feed.nextPageURL == nil)
        #expect(feed.items.map(\.contentID) == ["ep-004"])
        #expect(feed.items.first?.type == .file)
        #expect(feed.items.first?.categories == [["Family"]])
    }

    @Test func lookupDocumentGivesOneItem() throws {
        let item = try FeedParser.parseLookupItem(FeedFixtures.data("lookup-item.json"), baseURL: Self.base)
        #expect(item.contentID == "ep-042")
        #expect(item.type == .hls)
        #expect(item.duration == 3600)
        #expect(item.licence == LicenceTerms(kind: .rental, licenceURL: "https://acme.example/licence/ep-042"))
    }

    @Test func lookupWithUnusableItemIsAnError() throws {
        let document = #"{"offlinefs": 1, "item": {"id": "x", "url": "ftp://example.com/x.mp4"}}"#
        do {
            _ = try FeedParser.parseLookupItem(Data(document.utf8), baseURL: Self.base)
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .invalidItem)
            #expect(error.message.contains("ftp"))
        }
        #expect(throws: FeedError(.invalidItem, "The lookup response has no \"item\" object.")) {
            try FeedParser.parseLookupItem(Data(#"{"offlinefs": 1}"#.utf8), baseURL: Self.base)
        }
    }

    @Test(arguments: [
        (#"{"items": []}"#, FeedError.Code.unsupported),
        (#"{"offlinefs": 2, "items": []}"#, .unsupported),
        (#"[1, 2, 3]"#, .unsupported),
        (#"{"offlinefs": 1, "items": [ {"id": "a""#, .malformed),
        // Nothing usable is an error, not an empty catalog (a merge would remove every item).
        (#"{"offlinefs": 1, "items": "notarray"}"#, .malformed),
        (#"{"offlinefs": 1, "items": [1, 2, "x", null]}"#, .invalidItem),
        (#"{"offlinefs": 1, "items": [{"id": "x", "url": "ftp://example.com/x.mp4"}]}"#, .invalidItem),
    ])
    func versionAndShapeErrors(document: String, code: FeedError.Code) throws {
        do {
            _ = try FeedParser.parse(Data(document.utf8), kind: .json, baseURL: Self.base)
            Issue.record("expected \(code)")
        } catch {
            #expect(error.code == code)
        }
    }

    /// An entry that is not an object is skipped with a warning naming its place; the entries
    /// after it are read.
    @Test func anEntryThatIsNotAnObjectIsSkippedAndTheRestRead() throws {
        let document = #"{"offlinefs": 1, "items": [{"id": "a", "url": "a.mp4"}, 7, null, {"id": "b", "url": "b.mp4"}]}"#
        let feed = try FeedParser.parse(Data(document.utf8), kind: .json, baseURL: Self.base)
        #expect(feed.items.map(\.contentID) == ["a", "b"])
        #expect(feed.warnings == ["item #2 skipped: it is not an object", "item #3 skipped: it is not an object"])
        // An empty list is a catalog with no items (the publisher removed them all).
        #expect(try FeedParser.parse(Data(#"{"offlinefs": 1, "items": []}"#.utf8), kind: .json, baseURL: Self.base).items.isEmpty)
    }

    @Test func categoryCycleAndUnknownParentsAreWarnings() throws {
        let feed = try FeedParser.parse(FeedFixtures.data("category-cycle.json"), baseURL: Self.base)
        // a <-> b is a cycle: both become top level; c hangs under a
        #expect(feed.categories == [["A"], ["B"], ["A", "C"], ["Orphan"], ["Self"]])
        #expect(feed.items.first?.categories == [["A", "C"], ["Orphan"]])
        #expect(feed.warnings.contains { $0.contains("cycle") })
        #expect(feed.warnings.contains { $0.contains("'orphan'") && $0.contains("unknown parent") })
        #expect(feed.warnings.contains { $0.contains("'self'") && $0.contains("own parent") })
        #expect(feed.warnings.contains { $0.contains("'a'") && $0.contains("duplicate") })
        #expect(feed.warnings.contains { $0.contains("unknown category 'nope'") })
    }

    @Test func longParentChainDoesNotOverflow() throws {
        // 20,000 categories, each the parent of the previous one (leaf declared first)
        let count = 20_000
        let categories = (0..<count).map { #"{"id": "c\#($0)", "name": "n\#($0)", "parent": "c\#($0 + 1)"}"# }
        let document = #"{"offlinefs": 1, "categories": ["# + categories.joined(separator: ",") + "]}"
        let feed = try FeedParser.parse(Data(document.utf8), baseURL: Self.base)
        #expect(feed.categories.allSatisfy { $0.count <= 32 })
        #expect(feed.warnings.contains { $0.contains("nested deeper than 32") })
    }
}
