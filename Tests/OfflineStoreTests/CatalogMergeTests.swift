import Foundation
import Synchronization
import Testing
import GRDB
@testable import OfflineStore

@Suite("Catalog merge")
struct CatalogMergeTests {
    let t0 = TestClock.start
    var t1: Date { t0.addingTimeInterval(3600) }

    @Test("A category no item is in any more goes: renamed, left by its items, or its source removed")
    func emptyCategoriesGo() throws {
        try withLibrary { store, _ throws in
            let acme = try store.addSource(name: "acme", feedURL: "https://acme.example/c.json")
            let pod = try store.addSource(name: "pod", feedURL: "https://pod.example/feed.xml")
            _ = try store.mergeCatalog(sourceID: acme.id, title: nil, entries: [entry("ep-1", categories: [["news", "local"], ["family"]])],
                                       isComplete: true, now: t0)
            _ = try store.mergeCatalog(sourceID: pod.id, title: nil, entries: [entry("p-1", categories: [["talk"], ["news"]])],
                                       isComplete: true, now: t0)
            #expect(try store.categories().map(\.path) == [["family"], ["news"], ["news", "local"], ["talk"]])
            // When ep-1 moves from news/local to news/world
            _ = try store.mergeCatalog(sourceID: acme.id, title: nil, entries: [entry("ep-1", categories: [["news", "world"], ["family"]])],
                                       isComplete: true, now: t1)
            #expect(try store.categories().map(\.path) == [["family"], ["news"], ["news", "world"], ["talk"]])
            // When pod goes: talk goes; news stays (a category below it holds ep-1)
            _ = try store.removeSource(name: "pod")
            #expect(try store.categories().map(\.path) == [["family"], ["news"], ["news", "world"]])
        }
    }

    @Test("A NUL in a title or summary is a space, not the end of the text")
    func aNULInATitleIsASpace() throws {
        try withLibrary { store, _ throws in
            let acme = try store.addSource(name: "acme", feedURL: "https://acme.example/c.json")
            var golf = entry("golf", title: "Golf\u{07}Bell\u{00}Null")
            golf.summary = "first\u{00}second"
            _ = try store.mergeCatalog(sourceID: acme.id, title: nil, entries: [golf], isComplete: true, now: t0)
            let item = try #require(try store.item(source: "acme", contentID: "golf"))
            #expect(item.title == "Golf\u{07}Bell Null")
            #expect(item.summary == "first second")
            #expect(item.fileName == "Golf Bell Null [golf].mp4")
            // And the next sync of the same feed changes nothing
            let again = try store.mergeCatalog(sourceID: acme.id, title: nil, entries: [golf], isComplete: true, now: t1)
            #expect(again.updated == 0)
        }
    }

    /// Item `pod/ep-1`, stated 1000 bytes by its feed, with bytes the origin said are of a
    /// 5000-byte file and its size set to that.
    private func itemWithTheOriginsSize(_ store: LibraryStore) throws -> (source: Source, id: Int64) {
        let source = try store.addSource(name: "pod", feedURL: "https://pod.example/feed.xml")
        _ = try store.mergeCatalog(sourceID: source.id, title: nil, entries: [entry("ep-1", size: 1000)], isComplete: true, now: t0)
        let id = try #require(try store.item(source: "pod", contentID: "ep-1")).id
        try store.commitPresentRanges(itemID: id, file: "media", ranges: [0..<100],
                                      validator: CacheValidator(etag: "\"v1\"", lastModified: nil, totalSize: 5000))
        try store.setSize(itemID: id, 5000)
        return (source, id)
    }

    @Test("The origin's size of cached bytes wins over a feed that states another for the same URL")
    func theOriginsSizeWinsOverTheFeeds() throws {
        try withLibrary { store, _ throws in
            // Given bytes the origin said are of a 5000-byte file, and the item's size set to it
            let (source, id) = try itemWithTheOriginsSize(store)
            // When the feed states its wrong length again: the origin's stays, nothing changed
            let again = try store.mergeCatalog(sourceID: source.id, title: nil, entries: [entry("ep-1", size: 1000)],
                                               isComplete: true, now: t1)
            #expect(try store.item(id: id)?.size == 5000)
            #expect(again.updated == 0 && again.unchanged == 1)
            // When the media moves to another URL with the same stated length (a CDN move), it
            // is the same file: its size stays, and nothing is to be fetched again
            var moved = entry("ep-1", size: 1000)
            moved.mediaURL = "https://example.com/media/ep-1-v2.mp4"
            let move = try store.mergeCatalog(sourceID: source.id, title: nil, entries: [moved], isComplete: true, now: t1)
            #expect(try store.item(id: id)?.size == 5000)
            #expect(move.replacedMediaItemIDs.isEmpty)
            // Another URL and another length: another file, the cached bytes are replaced
            var replaced = entry("ep-1", size: 2000)
            replaced.mediaURL = "https://example.com/media/ep-1-v3.mp4"
            let replace = try store.mergeCatalog(sourceID: source.id, title: nil, entries: [replaced], isComplete: true, now: t1)
            #expect(try store.item(id: id)?.size == 2000)
            #expect(replace.replacedMediaItemIDs == [id])
        }
    }

    /// A backup's rsync copies the size shown: after an eviction the feed's wrong length must
    /// not come back (it copied 8,408,542 bytes of a 9,408,542-byte file, exit 0), and a new
    /// length (the publisher replaced the file) is taken once the old version's bytes are gone.
    @Test("The origin's size outlives an eviction; a new stated size is taken once the bytes before are gone")
    func theOriginsSizeOutlivesAnEviction() throws {
        try withLibrary { store, _ throws in
            let (source, id) = try itemWithTheOriginsSize(store)
            // Evicted, and the feed states its wrong length again: the origin's size stays
            try store.clearPresentRanges(itemID: id)
            let again = try store.mergeCatalog(sourceID: source.id, title: nil, entries: [entry("ep-1", size: 1000)],
                                               isComplete: true, now: t1)
            #expect(try store.item(id: id)?.size == 5000)
            #expect(again.updated == 0 && again.unchanged == 1)
            // Cached again (version 1), then the feed states a new length: the cached version's
            // size shows while its bytes are kept, and the new one once they are evicted
            try store.commitPresentRanges(itemID: id, file: "media", ranges: [0..<100],
                                          validator: CacheValidator(etag: "\"v1\"", lastModified: nil, totalSize: 5000))
            _ = try store.mergeCatalog(sourceID: source.id, title: nil, entries: [entry("ep-1", size: 3000)], isComplete: true, now: t1)
            #expect(try store.item(id: id)?.size == 5000)
            try store.clearPresentRanges(itemID: id)
            _ = try store.mergeCatalog(sourceID: source.id, title: nil, entries: [entry("ep-1", size: 3000)], isComplete: true, now: t1)
            #expect(try store.item(id: id)?.size == 3000)
        }
    }

    @Test("New content ids are inserted as discovered, with file names and categories")
    func addsItems() throws {
        try withLibrary { store, _ throws in
            let source = try store.addSource(name: "acme", feedURL: "https://acme.example/c.json")
            let report = try store.mergeCatalog(
                sourceID: source.id, title: "ACME TV",
                entries: [entry("ep-1", title: "Launch Day", categories: [["news", "local"], ["family"]]),
                          entry("ep-2", title: "Audio", type: .audio, mime: "audio/mpeg"),
                          entry("ep-1", title: "Duplicate listing is ignored")],
                isComplete: true, now: t0)
            #expect(report.added == 2 && report.updated == 0 && report.removed == 0)

            let item = try #require(try store.item(source: "acme", contentID: "ep-1"))
            #expect(item.state == .discovered)
            #expect(item.inCatalog)
            #expect(item.title == "Launch Day")
            #expect(item.fileName == "Launch Day [ep-1].mp4")
            #expect(item.addedAt == t0)
            #expect(try store.item(fileName: "Audio [ep-2].mp3")?.contentID == "ep-2")
            #expect(try store.categoryPaths(itemID: item.id) == [["family"], ["news", "local"]])
            #expect(try store.categories().map(\.path) == [["family"], ["news"], ["news", "local"]])
            #expect(try store.source(id: source.id)?.title == "ACME TV")
        }
    }

    @Test("A merge writes without evaluating CHECK constraints, and leaves them enforced")
    func checksRestored() throws {
        try withLibrary { store, _ throws in
            let source = try store.addSource(name: "acme", feedURL: "https://acme.example/c.json")
            var odd = entry("ep-1")
            odd.thumbnailSize = -5  // what the CHECK would refuse is not written
            var page = store.beginCatalogMerge(sourceID: source.id, now: t0)
            try page.merge(page: [odd, entry("ep-2")])
            _ = try page.finish(title: nil, isComplete: true)
            #expect(try store.item(source: "acme", contentID: "ep-1")?.thumbnailSize == nil)
            #expect(try store.writerPragma("ignore_check_constraints") == "0")
        }
    }

    @Test("Changed metadata updates in place and keeps the file name; categories re-link")
    func updatesItems() throws {
        try withLibrary { store, _ throws in
            let source = try store.addSource(name: "acme", feedURL: "https://acme.example/c.json")
            _ = try store.mergeCatalog(sourceID: source.id, title: nil,
                                       entries: [entry("ep-1", title: "Old", categories: [["news"]]), entry("ep-2")],
                                       isComplete: true, now: t0)
            let before = try #require(try store.item(source: "acme", contentID: "ep-1"))

            var changed = entry("ep-1", title: "New title", size: 2000, categories: [["sport"]])
            changed.subtitles = [SubtitleTrack(language: "en", url: "https://acme.example/en.vtt", format: "vtt")]
            let report = try store.mergeCatalog(sourceID: source.id, title: nil, entries: [changed, entry("ep-2")],
                                                isComplete: true, now: t1)
            #expect(report.updated == 1 && report.unchanged == 1 && report.added == 0)

            let after = try #require(try store.item(id: before.id))
            #expect(after.title == "New title")
            #expect(after.size == 2000)
            #expect(after.subtitles == changed.subtitles)
            #expect(after.fileName == "Old [ep-1].mp4") // stable: never recomputed
            #expect(after.updatedAt == t1)
            #expect(try store.categoryPaths(itemID: after.id) == [["sport"]])

            // Same feed again: nothing changes.
            let again = try store.mergeCatalog(sourceID: source.id, title: nil, entries: [changed, entry("ep-2")],
                                               isComplete: true, now: t1)
            #expect(again.unchanged == 2 && again.updated == 0)
        }
    }

    @Test("Items that leave the feed: undownloaded ones go, requested/streamed/locked ones stay")
    func removesAndKeeps() throws {
        try withLibrary { store, _ throws in
            let source = try store.addSource(name: "acme", feedURL: "https://acme.example/c.json")
            let ids = ["plain", "requested", "streamed", "cached", "locked", "tomb"]
            _ = try store.mergeCatalog(sourceID: source.id, title: nil, entries: ids.map { entry($0) }, isComplete: true, now: t0)
            func id(_ c: String) throws -> Int64 { try #require(try store.item(source: "acme", contentID: c)).id }
            try store.setRequested(itemID: id("requested"), true)
            try store.setState(itemID: id("requested"), state: .queued)
            try store.addPresentRange(itemID: id("streamed"), file: "media", range: 0..<100)
            try store.setState(itemID: id("cached"), state: .cached)
            try store.setLocked(itemID: id("locked"), true)
            try store.setState(itemID: id("tomb"), state: .deleted)
            let plainID = try id("plain")

            // A partial feed (a failed page) removes nothing.
            let partial = try store.mergeCatalog(sourceID: source.id, title: nil, entries: [], isComplete: false, now: t1)
            #expect(partial.removed == 0 && partial.keptDownloaded == 0)
            #expect(try store.item(id: plainID) != nil)

            // The complete feed without any of them.
            let report = try store.mergeCatalog(sourceID: source.id, title: nil, entries: [entry("new")], isComplete: true, now: t1)
            #expect(report.added == 1)
            #expect(report.removed == 1)
            #expect(report.removedItemIDs == [plainID])
            #expect(report.keptDownloaded == 4) // the tombstone is kept but not counted
            #expect(try store.item(id: plainID) == nil)
            for kept in ["requested", "streamed", "cached", "locked", "tomb"] {
                let item = try #require(try store.item(source: "acme", contentID: kept))
                #expect(!item.inCatalog, "\(kept) should be out of the catalog")
            }

            // When one comes back, it is in the catalog again.
            let back = try store.mergeCatalog(sourceID: source.id, title: nil, entries: [entry("new"), entry("cached")],
                                              isComplete: true, now: t1)
            #expect(back.updated == 1)
            #expect(try store.item(source: "acme", contentID: "cached")?.inCatalog == true)
        }
    }

    @Test("A deleted item is never resurrected by a re-sync")
    func tombstoneStays() throws {
        try withLibrary { store, _ throws in
            let source = try store.addSource(name: "acme", feedURL: "https://acme.example/c.json")
            _ = try store.mergeCatalog(sourceID: source.id, title: nil, entries: [entry("ep-1")], isComplete: true, now: t0)
            let item = try #require(try store.item(source: "acme", contentID: "ep-1"))
            try store.setState(itemID: item.id, state: .deleted)

            let report = try store.mergeCatalog(sourceID: source.id, title: nil, entries: [entry("ep-1", title: "Renamed")],
                                                isComplete: true, now: t1)
            #expect(report.added == 0 && report.updated == 1)
            let after = try #require(try store.item(id: item.id))
            #expect(after.state == .deleted)
            #expect(after.title == "Renamed")
            #expect(try store.items().isEmpty) // tombstones are hidden by default
            #expect(try store.items(matching: ItemFilter(includeDeleted: true)).count == 1)
        }
    }

    @Test("A metadata-pending item gets its metadata and file name from the merge")
    func pendingResolves() throws {
        try withLibrary { store, _ throws in
            let source = try store.addSource(name: "acme", feedURL: "https://acme.example/c.json")
            let pending = try store.addPendingItem(sourceID: source.id, contentID: "ep-9")
            #expect(pending.state == .metadataPending && pending.fileName == nil && pending.requested)
            let report = try store.mergeCatalog(sourceID: source.id, title: nil, entries: [entry("ep-9", title: "Found")],
                                                isComplete: false, now: t1)
            #expect(report.resolvedPendingItemIDs == [pending.id])
            let item = try #require(try store.item(id: pending.id))
            #expect(item.fileName == "Found [ep-9].mp4")
            #expect(item.state == .metadataPending) // the engine moves it on
            #expect(item.inCatalog)
        }
    }

    @Test("Licence terms are stored and updated without losing acquisition data")
    func licences() throws {
        try withLibrary { store, _ throws in
            let source = try store.addSource(name: "acme", feedURL: "https://acme.example/c.json")
            let rental = LicenceTerms(kind: .rental, rentalDuration: 172_800, playDuration: 86_400,
                                      licenceURL: "https://acme.example/licence")
            _ = try store.mergeCatalog(sourceID: source.id, title: nil, entries: [entry("m", licence: rental)],
                                       isComplete: true, now: t0)
            let id = try #require(try store.item(source: "acme", contentID: "m")).id
            var licence = try #require(try store.licence(itemID: id))
            #expect(licence.terms == rental)
            licence.acquiredAt = t0
            licence.expiresAt = t0.addingTimeInterval(172_800)
            licence.key = Data([1, 2, 3, 4])
            try store.putLicence(licence)

            var longer = rental
            longer.rentalDuration = 259_200
            _ = try store.mergeCatalog(sourceID: source.id, title: nil, entries: [entry("m", licence: longer)],
                                       isComplete: true, now: t1)
            let updated = try #require(try store.licence(itemID: id))
            #expect(updated.terms == longer)
            #expect(updated.acquiredAt == t0)
            #expect(updated.key == Data([1, 2, 3, 4]))
        }
    }

    @Test("One sync event per merge, and one discovered event per new item with its path")
    func syncEvent() throws {
        try withLibrary { store, _ throws in
            let source = try store.addSource(name: "acme", feedURL: "https://acme.example/c.json")
            let start = try store.lastEventSeq()
            _ = try store.mergeCatalog(sourceID: source.id, title: nil, entries: (0..<50).map { entry("e\($0)") },
                                       isComplete: true, now: t0)
            let events = try store.events(after: start)
            let syncs = events.filter { $0.kind == .sync }
            #expect(syncs.count == 1)
            #expect(syncs.first?.sourceID == source.id)
            #expect(syncs.first?.details?.contains("\"added\":50") == true)
            let discovered = events.filter { $0.kind == .discovered }
            #expect(discovered.count == 50)
            let e7 = try #require(try store.item(source: "acme", contentID: "e7"))
            #expect(discovered.contains { $0.itemID == e7.id && $0.message == "discovered sources/acme/\(e7.fileName!)" })
            // A re-sync finds nothing new.
            let again = try store.lastEventSeq()
            _ = try store.mergeCatalog(sourceID: source.id, title: nil, entries: (0..<50).map { entry("e\($0)") },
                                       isComplete: true, now: t0)
            #expect(try store.events(after: again).map(\.kind) == [.sync])
        }
    }

    @Test("A sync of more than 1,000 new items writes 1,000 discovered lines and one summary")
    func discoveredEventsAreCapped() throws {
        try withLibrary { store, _ throws in
            let source = try store.addSource(name: "acme", feedURL: "https://acme.example/c.json")
            let start = try store.lastEventSeq()
            _ = try store.mergeCatalog(sourceID: source.id, title: nil, entries: (0..<1_005).map { entry("e\($0)") },
                                       isComplete: true, now: t0)
            let discovered = try store.events(after: start, limit: 10_000).filter { $0.kind == .discovered }
            #expect(discovered.count == 1_001)
            #expect(discovered.last?.itemID == nil)
            #expect(discovered.last?.message == "discovered 5 more items in sources/acme/")
        }
    }

    @Test("100,000 items merge in one transaction; a re-sync finds them unchanged")
    func largeCatalog() throws {
        try withLibrary { store, _ throws in
            let source = try store.addSource(name: "big", feedURL: "https://big.example/c.json")
            let categories = [["news"], ["news", "local"], ["family"], ["trending"]]
            let entries = (0..<100_000).map { i in
                entry("id-\(i)", title: "Episode \(i % 1000)", categories: [categories[i % categories.count]])
            }
            let clock = ContinuousClock()
            var report = MergeReport()
            let insertTime = try clock.measure {
                report = try store.mergeCatalog(sourceID: source.id, title: nil, entries: entries, isComplete: true, now: t0)
            }
            #expect(report.added == 100_000)
            let resyncTime = try clock.measure {
                report = try store.mergeCatalog(sourceID: source.id, title: nil, entries: entries, isComplete: true, now: t1)
            }
            #expect(report.unchanged == 100_000)
            print("mergeCatalog 100k: insert \(insertTime), re-sync \(resyncTime)")

            let listing = try store.items(matching: ItemFilter(source: "big"))
            #expect(listing.count == 100_000)
            #expect(Set(listing.compactMap(\.item.fileName)).count == 100_000)
            #expect(try store.items(matching: ItemFilter(categoryPath: ["news"])).count == 50_000) // with news/local
            #expect(try store.items(matching: ItemFilter(categoryPath: ["news", "local"])).count == 25_000)
        }
    }

    @Test("File times move with what changed: side files with their fields, media with its bytes, folder.jpg with its URL")
    func fileTimesMoveWithTheirContent() throws {
        let clock = Mutex(TestClock.start)
        try withLibrary(clock: { clock.withLock { $0 } }) { store, _ throws in
            let source = try store.addSource(name: "pod", feedURL: "https://pod.example/feed.xml")
            let published = TestClock.start.addingTimeInterval(-86_400)
            _ = try store.mergeCatalog(sourceID: source.id, title: nil, entries: [entry("ep-1", title: "Plain", published: published)],
                                       isComplete: true, now: t0)
            func outline() throws -> ItemOutline { try #require(try store.itemOutline(fileName: "Plain [ep-1].mp4")) }
            #expect(try outline().mediaTime == published && outline().sidesTime == published)
            // When the feed fixes a typo, at the same length: the side files' time moves, the media's not
            _ = try store.mergeCatalog(sourceID: source.id, title: nil, entries: [entry("ep-1", title: "Plane", published: published)],
                                       isComplete: true, now: t1)
            #expect(try outline().mediaTime == published)
            #expect(try outline().sidesTime == t1)
            // When the same feed comes again, nothing moves
            _ = try store.mergeCatalog(sourceID: source.id, title: nil, entries: [entry("ep-1", title: "Plane", published: published)],
                                       isComplete: true, now: t1.addingTimeInterval(60))
            #expect(try outline().sidesTime == t1 && outline().mediaTime == published)
            // When the origin answers with another validator for the cached media: its time moves
            let id = try outline().id
            try store.commitPresentRanges(itemID: id, file: "media", ranges: [0..<100],
                                          validator: CacheValidator(etag: "\"v1\"", totalSize: 1000))
            let t2 = t1.addingTimeInterval(3600)
            clock.withLock { $0 = t2 }
            try store.resetCache(itemID: id, file: "media", validator: CacheValidator(etag: "\"v1\"", totalSize: 1000))
            #expect(try outline().mediaTime == published, "the same validator is the same file (bytes found corrupt)")
            try store.resetCache(itemID: id, file: "media", validator: CacheValidator(etag: "\"v2\"", totalSize: 1000))
            #expect(try outline().mediaTime == t2)
            // And when the feed gives another checksum
            var changed = entry("ep-1", title: "Plane", published: published)
            changed.sha256 = String(repeating: "a", count: 64)
            _ = try store.mergeCatalog(sourceID: source.id, title: nil, entries: [changed], isComplete: true, now: t2)
            changed.sha256 = String(repeating: "b", count: 64)
            let t3 = t2.addingTimeInterval(3600)
            _ = try store.mergeCatalog(sourceID: source.id, title: nil, entries: [changed], isComplete: true, now: t3)
            #expect(try outline().mediaTime == t3)
            #expect(try outline().sidesTime == t3, "side files are never older than the media")
            // A new show title (in every `.nfo` of the source) moves the side files' time too
            let t4 = t3.addingTimeInterval(3600)
            _ = try store.mergeCatalog(sourceID: source.id, title: "Pod", entries: [changed], isComplete: true, now: t4)
            #expect(try outline().sidesTime == t3, "a first title is the feed's first sync")
            _ = try store.mergeCatalog(sourceID: source.id, title: "The Pod", entries: [changed], isComplete: true, now: t4)
            #expect(try outline().sidesTime == t4 && outline().mediaTime == t3)
            // A source's artwork is dated by the sync that found it at another URL
            try store.setSourceImage(sourceID: source.id, "https://pod.example/a.jpg")
            try store.setSourceImage(sourceID: source.id, "https://pod.example/a.jpg")
            #expect(try store.source(named: "pod")?.imageChangedAt == t2)
            clock.withLock { $0 = t3 }
            try store.setSourceImage(sourceID: source.id, "https://pod.example/a.jpg")
            #expect(try store.source(named: "pod")?.imageChangedAt == t2)
            try store.setSourceImage(sourceID: source.id, "https://pod.example/b.jpg")
            #expect(try store.source(named: "pod")?.imageChangedAt == t3)
        }
    }
}

@Suite("HLS items a sync prepares")
struct HLSItemsWithoutStreamTests {
    /// Every sync asks (a `304` one too): at a million items, walking the source took most
    /// of an unchanged catalog's sync.
    @Test("are the source's HLS items without a rendition, read through their own index")
    func foundThroughTheirIndex() throws {
        try withLibrary { store, _ throws in
            let (news, other) = try twoSources(store)
            func stream(_ id: String) -> CatalogEntry { entry(id, type: .hls, mime: "application/vnd.apple.mpegurl") }
            _ = try store.mergeCatalog(sourceID: news.id, title: nil,
                                       entries: (0..<300).map { entry("video-\($0)") } + [stream("live-1"), stream("live-2")],
                                       isComplete: true, now: TestClock.start)
            _ = try store.mergeCatalog(sourceID: other.id, title: nil, entries: [stream("live-3")],
                                       isComplete: true, now: TestClock.start)
            let expected = try ["live-1", "live-2"].map { try #require(try store.item(source: "news", contentID: $0)).id }

            #expect(try store.hlsItemsWithoutStream(sourceID: news.id) == expected.sorted())
            let plan = try store.read { db in
                try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + LibraryStore.hlsItemsWithoutStreamSQL, arguments: [news.id])
                    .map { $0["detail"] as String }
            }
            #expect(plan.contains { $0.contains("USING INDEX item_hls") }, "\(plan)")
            #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(plan)")
        }
    }
}

@Suite("Items a sync just added")
struct NewestItemsTests {
    @Test("are the source's newest in that state, newest first, and no more than asked")
    func newestOfTheSource() throws {
        try withLibrary { store, _ throws in
            let (news, other) = try twoSources(store)
            let later = TestClock.start.addingTimeInterval(3600)
            _ = try store.mergeCatalog(sourceID: news.id, title: nil, entries: ["a", "b", "c"].map { entry($0) },
                                       isComplete: true, now: TestClock.start)
            _ = try store.mergeCatalog(sourceID: news.id, title: nil, entries: ["a", "b", "c", "d", "e"].map { entry($0) },
                                       isComplete: true, now: later)
            _ = try store.mergeCatalog(sourceID: other.id, title: nil, entries: [entry("f")], isComplete: true, now: later)
            func id(_ contentID: String) throws -> Int64 { try #require(try store.item(source: "news", contentID: contentID)).id }

            #expect(try store.newestItemIDs(sourceID: news.id, state: .discovered, limit: 2) == [try id("e"), try id("d")])
            #expect(try store.newestItemIDs(sourceID: news.id, state: .queued, limit: 2) == [])
        }
    }
}

/// Sources "news" and "other", for queries that must keep to one source.
private func twoSources(_ store: LibraryStore) throws -> (news: Source, other: Source) {
    (try store.addSource(name: "news", feedURL: "https://news.example/c.json"),
     try store.addSource(name: "other", feedURL: "https://other.example/c.json"))
}
