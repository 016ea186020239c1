import Foundation
import OfflineEngine
import OfflineFeeds
import OfflineStore
import OfflineTestSupport
import Testing

@Suite("Hostile feeds give a clear error or safe names, never a crash")
struct HostileFeedSyncTests {
    /// Syncs one feed document served at /feed and returns the report and the library.
    private func sync(_ body: String, contentType: String = "application/rss+xml",
                      settings: SyncSettings = SyncSettings()) throws -> (SyncReport, TemporaryLibrary, TestOrigin) {
        let origin = try TestOrigin()
        origin.serve("/feed", .text(body, contentType: contentType))
        let temp = try TemporaryLibrary(settings: settings)
        try temp.library.addSource(name: "hostile", feedURL: origin.url("/feed"))
        let report = try #require(try temp.library.sync().first)
        return (report, temp, origin)
    }

    private func expectSyncError(_ body: String, containing words: String, settings: SyncSettings = SyncSettings(),
                                 sourceLocation: SourceLocation = #_sourceLocation) throws {
        let (report, temp, origin) = try sync(body, settings: settings)
        defer { origin.stop() }
        #expect(!report.succeeded, sourceLocation: sourceLocation)
        let error = try temp.library.store.source(named: "hostile")?.lastSyncError ?? ""
        #expect(error.lowercased().contains(words.lowercased()), "\(error)", sourceLocation: sourceLocation)
        #expect(try temp.library.items().isEmpty, sourceLocation: sourceLocation)
    }

    @Test func billionLaughsIsRefused() throws {
        let body = """
            <?xml version="1.0"?>
            <!DOCTYPE rss [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">
            <!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">]>
            <rss version="2.0"><channel><title>&d;</title></channel></rss>
            """
        try expectSyncError(body, containing: "DOCTYPE")
    }

    @Test func externalEntityIsRefused() throws {
        let body = """
            <?xml version="1.0"?>
            <!DOCTYPE rss [<!ENTITY x SYSTEM "file:///etc/passwd">]>
            <rss version="2.0"><channel><title>&x;</title></channel></rss>
            """
        try expectSyncError(body, containing: "DOCTYPE")
    }

    @Test func feedOverTheSizeCapIsRefused() throws {
        var settings = SyncSettings()
        settings.feedLimits.maxDocumentBytes = 1024
        let body = "<rss version=\"2.0\"><channel><title>" + String(repeating: "x", count: 4096) + "</title></channel></rss>"
        try expectSyncError(body, containing: "limit", settings: settings)
    }

    @Test func deeplyNestedJSONIsRefused() throws {
        let body = "{\"offlinefs\": 1, \"items\": " + String(repeating: "[", count: 100)
            + String(repeating: "]", count: 100) + "}"
        let origin = try TestOrigin()
        defer { origin.stop() }
        origin.serve("/feed.json", .text(body, contentType: "application/json"))
        let temp = try TemporaryLibrary()
        try temp.library.addSource(name: "deep", feedURL: origin.url("/feed.json"))
        let report = try #require(try temp.library.sync().first)
        #expect(!report.succeeded)
        let error = try temp.library.store.source(named: "deep")?.lastSyncError ?? ""
        #expect(error.contains("nest"), "\(error)")
    }

    @Test func undeclaredHTMLEntityDoesNotStopTheFeed() throws {
        let body = """
            <rss version="2.0"><channel><title>Caf&eacute;&nbsp;Talk</title>
            <item><title>Caf&eacute;&nbsp;One</title><guid>c1</guid>
            <enclosure url="http://127.0.0.1:9/c1.mp3" length="10000" type="audio/mpeg"/></item>
            </channel></rss>
            """
        let (report, temp, origin) = try sync(body)
        defer { origin.stop() }
        #expect(report.succeeded, "\(report.summary)")
        #expect(try temp.library.items().first?.title == "Café\u{00A0}One")
    }

    @Test func nonHTTPEnclosuresAreSkippedWithWarnings() throws {
        let body = """
            <rss version="2.0"><channel><title>Mixed</title>
            <item><title>Local</title><guid>f</guid><enclosure url="file:///etc/passwd" type="audio/mpeg"/></item>
            <item><title>FTP</title><guid>ftp</guid><enclosure url="ftp://example.com/a.mp3" type="audio/mpeg"/></item>
            <item><title>Good</title><guid>ok</guid><enclosure url="http://127.0.0.1:9/ok.mp3" length="5000" type="audio/mpeg"/></item>
            </channel></rss>
            """
        let (report, temp, origin) = try sync(body)
        defer { origin.stop() }
        #expect(report.succeeded)
        #expect(report.warnings.count == 2, "\(report.warnings)")
        #expect(try temp.library.items().map(\.contentId) == ["ok"])
        // A mount's or a scheduled sync has no terminal: the warnings are one line of `.events`.
        let warnings = try temp.library.store.events().filter { $0.kind == .warning }
        #expect(warnings.map(\.message) == ["hostile: 2 warnings: \(report.warnings[0]); \(report.warnings[1])"])
    }

    /// A JSON catalog whose `items` is not a list, or holds nothing usable, fails the sync and
    /// keeps the catalog (merged as empty, it would remove every item not downloaded).
    @Test func aCatalogWithNothingUsableKeepsTheItemsListed() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        origin.serve("/feed", .text(#"{"offlinefs": 1, "items": [{"id": "a", "url": "http://127.0.0.1:9/a.mp4"}]}"#,
                                    contentType: "application/json"))
        let temp = try TemporaryLibrary()
        try temp.library.addSource(name: "json", feedURL: origin.url("/feed"))
        #expect(try #require(try temp.library.sync().first).succeeded)
        for body in [#"{"offlinefs": 1, "items": "notarray"}"#, #"{"offlinefs": 1, "items": [1, 2, "x", null]}"#] {
            origin.changeContent("/feed", .text(body, contentType: "application/json"))
            #expect(try #require(try temp.library.sync().first).succeeded == false, "\(body)")
            #expect(try temp.library.items().map(\.contentId) == ["a"], "\(body)")
        }
    }

    @Test func hostileTitlesGiveSafeDistinctStableNames() throws {
        let longTitle = String(repeating: "é", count: 200)     // 400 bytes
        let nfc = "Caf\u{00E9}"
        let nfd = "Cafe\u{0301}"
        func item(_ id: String, _ title: String) -> String {
            let escapedTitle = title.unicodeScalars.map { $0.value < 0x20 ? String(format: "\\u%04x", $0.value) : String($0) }.joined()
                .replacingOccurrences(of: "\"", with: "\\\"")
            return "{\"id\": \"\(id)\", \"title\": \"\(escapedTitle)\", \"url\": \"http://127.0.0.1:9/\(id).mp4\", \"size\": 1, \"mimeType\": \"video/mp4\"}"
        }
        let items = [
            item("slash", "a/b/../../etc/passwd"), item("dots", ".."), item("dot", "."),
            item("nul", "nul\u{0000}byte"), item("ctl", "bell\u{0007}tab\u{0009}"), item("hidden", ".hidden"),
            item("dash", "-rf"), item("long", longTitle), item("nfc", nfc), item("nfd", nfd),
            item("twin", "Same"), item("twin/", "Same"), item("twin_", "Same"),
        ]
        let body = "{\"offlinefs\": 1, \"items\": [\(items.joined(separator: ","))]}"
        let origin = try TestOrigin()
        defer { origin.stop() }
        origin.serve("/feed.json", .text(body, contentType: "application/json"))
        let temp = try TemporaryLibrary()
        try temp.library.addSource(name: "hostile", feedURL: origin.url("/feed.json"))
        let report = try #require(try temp.library.sync().first)
        #expect(report.succeeded, "\(report.summary)")

        let names = try temp.library.items().map(\.fileName)
        #expect(names.count == items.count)
        #expect(Set(names).count == names.count, "names are distinct: \(names)")
        for name in names {
            #expect(!name.contains("/"), "\(name)")
            #expect(!name.contains("\u{0000}"), "\(name)")
            #expect(!name.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "\(name)")
            #expect(!name.hasPrefix("."), "\(name)")
            #expect(name != "." && name != "..")
            #expect(name.utf8.count <= 255, "\(name.utf8.count) bytes")
        }

        // And the names stay the same after a restart and a full re-sync
        origin.setFault("/feed.json", .changeETagEachRequest)
        let reopened = try Library(folder: temp.folder)
        _ = try reopened.sync()
        #expect(try reopened.items().map(\.fileName) == names)
    }

    @Test func htmlInsteadOfAFeedIsAClearError() throws {
        let (report, temp, origin) = try sync("<html><body>Not here</body></html>", contentType: "text/html")
        defer { origin.stop() }
        #expect(!report.succeeded)
        #expect(try temp.library.store.source(named: "hostile")?.lastSyncError?.isEmpty == false)
    }

    @Test func redirectToAFileURLIsRefused() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        origin.redirect(from: "/feed", to: "file:///etc/passwd")
        let temp = try TemporaryLibrary()
        try temp.library.addSource(name: "sneaky", feedURL: origin.url("/feed"))
        let report = try #require(try temp.library.sync().first)
        #expect(!report.succeeded)
        let error = try temp.library.store.source(named: "sneaky")?.lastSyncError ?? ""
        #expect(error.contains("http"), "\(error)")
    }
}
