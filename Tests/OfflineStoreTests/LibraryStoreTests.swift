import Foundation
import GRDB
import Testing
@testable import OfflineStore

@Suite("Library store: open, schema, sources")
struct LibraryStoreTests {
    @Test("A fresh library gets the v1 schema and durable settings")
    func freshLibrary() throws {
        try withLibrary { store, folder throws in
            #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("library.sqlite").path))
            #expect(try store.appliedMigrations() == ["v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13", "v14", "v15", "v16", "v17"])
            #expect(try store.writerPragma("journal_mode") == "wal")
            #expect(try store.writerPragma("synchronous") == "2") // FULL
            #expect(try store.writerPragma("foreign_keys") == "1")
            #expect(try store.integrityCheck() == ["ok"])
            #expect(try store.sources().isEmpty)
        }
    }

    @Test("The writer's page cache is large only while a sync merges")
    func mergeCacheIsGivenBack() throws {
        try withLibrary { store, _ throws in
            #expect(try store.writerPragma("cache_size") == "-2000")
            try store.withMergeCache { () throws in
                #expect(try store.writerPragma("cache_size") == "-32768")
                // A second sync at once keeps it until the last one ends.
                store.withMergeCache {}
                #expect(try store.writerPragma("cache_size") == "-32768")
            }
            // A mount's commits for weeks after a sync do not fill a 32 MiB cache.
            #expect(try store.writerPragma("cache_size") == "-2000")
        }
    }

    @Test("Readers keep a 256 KiB page cache; the writer keeps SQLite's 2 MiB")
    func readerCacheIsSmall() throws {
        try withLibrary { store, _ throws in
            // A commit empties every reader's cache (WAL): a large one only moves the mount's memory.
            #expect(try store.read { db in try String.fetchOne(db, sql: "PRAGMA cache_size") } == "-256")
            #expect(try store.writerPragma("cache_size") == "-2000")
        }
    }

    @Test("Reopening keeps sources, items and settings")
    func reopenKeepsData() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("offlinefs-reopen-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }

        // Given a library with a source, a merged item and a policy
        var store = try LibraryStore.open(folder: folder)
        let source = try store.addSource(name: "acme", feedURL: "https://acme.example/feed.json")
        _ = try store.mergeCatalog(sourceID: source.id, title: "ACME", entries: [entry("ep-1")], isComplete: true,
                                   now: TestClock.start)
        try store.setPolicy(name: "cache-limit", value: "10G")
        let before = try store.items()
        try store.close()

        // When it is opened again
        store = try LibraryStore.open(folder: folder)
        defer { try? store.close() }

        // Then everything is there, and the migration did not run twice
        #expect(try store.appliedMigrations() == ["v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13", "v14", "v15", "v16", "v17"])
        #expect(try store.source(named: "acme")?.title == "ACME")
        #expect(try store.items() == before)
        #expect(try store.policy(.cacheLimit) == .bytes(10 << 30))
    }

    @Test("A file that is not a database is refused with a clear error")
    func corruptFile() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("offlinefs-corrupt-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(repeating: 0x41, count: 8192).write(to: folder.appendingPathComponent("library.sqlite"))
        #expect {
            _ = try LibraryStore.open(folder: folder)
        } throws: { error in
            (error as? StoreError)?.code == .corruptDatabase
        }
    }

    @Test("A damaged page fails the check at open; the check leaves CHECK constraints enforced")
    func damagedPage() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("offlinefs-damaged-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try LibraryStore.open(folder: folder)
        #expect(try store.writerPragma("ignore_check_constraints") == "0")
        let source = try store.addSource(name: "acme", feedURL: "https://acme.example/feed.json")
        _ = try store.mergeCatalog(sourceID: source.id, title: nil, entries: (0..<400).map { entry("ep-\($0)") },
                                   isComplete: true, now: TestClock.start)
        try store.close()  // checkpoints the WAL into the file

        // A page in the middle of the file (item rows, not read by the open itself) gets an
        // invalid b-tree page type.
        let file = try FileHandle(forUpdating: folder.appendingPathComponent(LibraryStore.databaseFileName))
        let pages = try file.seekToEnd() / 4096
        #expect(pages > 20)
        try file.seek(toOffset: pages / 2 * 4096)
        try file.write(contentsOf: Data(repeating: 0xFF, count: 4096))
        try file.close()

        #expect {
            _ = try LibraryStore.open(folder: folder)
        } throws: { error in
            (error as? StoreError)?.code == .corruptDatabase
        }
    }

    @Test("Source names are validated and unique")
    func sourceNames() throws {
        try withLibrary { store, _ throws in
            for bad in ["", ".", "..", "a/b", "tab\there", "nul\u{0}", String(repeating: "é", count: 128), ".hidden", "  ", " acme", "acme "] {
                #expect(throws: StoreError.self) { try store.addSource(name: bad, feedURL: "https://x.example/") }
            }
            let source = try store.addSource(name: "Podcasts — été", feedURL: "https://x.example/rss")
            #expect(source.subscribed)
            #expect(source.kind == nil)
            #expect(source.addedAt == TestClock.start)
            #expect {
                try store.addSource(name: "Podcasts — été", feedURL: "https://y.example/rss")
            } throws: { error in
                (error as? StoreError)?.code == .duplicateSource
            }
        }
    }

    @Test("Sources: subscribe toggle, sync record, kind, removal cascades")
    func sourceLifecycle() throws {
        try withLibrary { store, _ throws in
            let source = try store.addSource(name: "news", feedURL: "https://n.example/feed")
            try store.setSubscribed(name: "news", false)
            #expect(try store.source(named: "news")?.subscribed == false)

            let later = TestClock.start.addingTimeInterval(60)
            try store.recordSync(sourceID: source.id, etag: "\"v1\"", lastModified: "Sat, 01 Mar 2025 12:00:00 GMT",
                                 error: nil, at: later, nextSyncAt: later.addingTimeInterval(3600))
            try store.setSourceKind(sourceID: source.id, .rss)
            let synced = try #require(try store.source(id: source.id))
            #expect(synced.etag == "\"v1\"")
            #expect(synced.lastSyncAt == later)
            #expect(synced.nextSyncAt == later.addingTimeInterval(3600))
            #expect(synced.kind == .rss)
            #expect(synced.lastSyncError == nil)

            let report = try store.mergeCatalog(sourceID: source.id, title: nil,
                                                entries: [entry("a", categories: [["news"]]), entry("b")],
                                                isComplete: true, now: later)
            #expect(report.added == 2)
            let ids = try store.items().map(\.item.id)
            try store.addPresentRange(itemID: ids[0], file: "media", range: 0..<10)

            // Removing the source removes its items and everything hanging off them.
            #expect(try store.removeSource(name: "news").sorted() == ids.sorted())
            #expect(try store.items(matching: ItemFilter(includeDeleted: true)).isEmpty)
            #expect(try store.presentRanges(itemID: ids[0], file: "media").isEmpty)
            #expect(throws: StoreError.self) { try store.removeSource(name: "news") }
            #expect(throws: StoreError.self) { try store.setSubscribed(name: "news", true) }
        }
    }
}
