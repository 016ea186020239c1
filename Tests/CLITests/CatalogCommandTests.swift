import Foundation
import OfflineTestSupport
import Testing

@Suite("offlinefs source / sync / ls / set / get, as a user runs them")
struct CatalogCommandTests {
    private func podcast(_ origin: TestOrigin) -> String {
        """
        <rss version="2.0"><channel><title>Night Owls</title>
        <item><title>Owls at Dusk</title><guid>owl-1</guid><category>Nature</category>
        <enclosure url="\(origin.url("/owl-1.mp3"))" length="1048576" type="audio/mpeg"/></item>
        <item><title>Bats</title><guid>owl-2</guid>
        <enclosure url="\(origin.url("/owl-2.mp3"))" length="8192" type="audio/mpeg"/></item>
        </channel></rss>
        """
    }

    @Test func addSyncAndListAFeed() throws {
        // Given a podcast feed on a real HTTP origin
        let origin = try TestOrigin()
        defer { origin.stop() }
        let url = origin.serveFeed(path: "/owls.rss", xml: podcast(origin))
        let cli = CLIRunner()
        defer { cli.removeLibrary() }

        // When the user adds it, syncs and lists
        let add = try cli.run("source", "add", "owls", url)
        let sync = try cli.run("sync")
        let list = try cli.run("ls")

        // Then each step succeeds and the listing shows titles, sizes and categories
        #expect(add.status == 0, "\(add.stderr)")
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(sync.stdout.contains("owls: 2 added"), "\(sync.stdout)")
        #expect(list.status == 0)
        #expect(list.stdout.contains("Owls at Dusk [owl-1].mp3"), "\(list.stdout)")
        #expect(list.stdout.contains("1.0 MiB"))
        #expect(list.stdout.contains("Nature"))
        // And a category filters by its path in any case; one that does not exist says so
        let nature = try cli.run("ls", "--category", "nature")
        #expect(nature.status == 0 && nature.stdout.contains("owl-1") && !nature.stdout.contains("owl-2"), "\(nature.stdout)")
        let none = try cli.run("ls", "--category", "News/Local")
        #expect(none.status == 1 && none.stderr.contains("no category 'News/Local'"), "\(none.stderr)")

        // And a second sync is a cheap conditional request
        let again = try cli.run("sync", "owls")
        #expect(again.stdout.contains("owls: not modified"), "\(again.stdout)")
    }

    /// What scripts and people met with names that are not plain words: a repeated
    /// `--source`, a category whose name holds a `/`, and titles in wide characters.
    @Test func listsBySeveralSourcesASlashedCategoryAndAlignWideTitles() throws {
        // Given two feeds, one with a space in its name, a category "AC/DC" and a Japanese title
        let origin = try TestOrigin()
        defer { origin.stop() }
        let owls = origin.serveFeed(path: "/owls.rss", xml: podcast(origin))
        let rock = origin.serveFeed(path: "/rock.rss", xml: """
            <rss version="2.0"><channel><title>Rock</title>
            <item><title>東京の夜</title><guid>r-1</guid><category>AC/DC</category>
            <enclosure url="\(origin.url("/r-1.mp3"))" length="4096" type="audio/mpeg"/></item>
            <item><title>Thunder</title><guid>r-2</guid><category>AC</category>
            <enclosure url="\(origin.url("/r-2.mp3"))" length="4096" type="audio/mpeg"/></item>
            </channel></rss>
            """)
        let quiet = origin.serveFeed(path: "/quiet.rss", xml: """
            <rss version="2.0"><channel><title>Quiet</title>
            <item><title>Hush</title><guid>q-1</guid>
            <enclosure url="\(origin.url("/q-1.mp3"))" length="4096" type="audio/mpeg"/></item>
            </channel></rss>
            """)
        let cli = CLIRunner()
        defer { cli.removeLibrary() }
        #expect(try cli.run("source", "add", "owls", owls).status == 0)
        #expect(try cli.run("source", "add", "Loud Rock", rock).status == 0)
        #expect(try cli.run("source", "add", "quiet", quiet).status == 0)
        #expect(try cli.run("sync").status == 0)

        // When --source is given twice, both sources' items are listed (not only the last's)
        let two = try cli.run("ls", "--source", "owls", "--source", "Loud Rock")
        #expect(two.status == 0, "\(two.stderr)")
        #expect(two.stdout.contains("owl-1") && two.stdout.contains("r-1") && !two.stdout.contains("q-1"), "\(two.stdout)")

        // And "AC/DC" names the category of that name, as does its folder name in the mount
        for name in ["AC/DC", "ac∕dc"] {
            let slashed = try cli.run("ls", "--category", name)
            #expect(slashed.status == 0 && slashed.stdout.contains("r-1") && !slashed.stdout.contains("r-2"), "\(name): \(slashed.stdout) \(slashed.stderr)")
        }

        // And the columns after a wide title line up on the screen: every row's CATEGORIES
        // column starts at the same display column
        let table = try cli.run("ls", "--source", "Loud Rock", "--source", "quiet").stdout.split(separator: "\n")
        #expect(table.count == 4, "\(table)")
        func displayColumn(of text: Substring, in line: Substring) -> Int? {
            guard let range = line.range(of: text) else { return nil }
            return line[..<range.lowerBound].reduce(0) { width, character in
                width + (character.unicodeScalars.first.map { (0x3000...0x9FFF).contains($0.value) } == true ? 2 : 1)
            }
        }
        let header = try #require(displayColumn(of: "CATEGORIES", in: table[0]))
        let wide = try #require(table.first { $0.contains("東京の夜") })
        #expect(displayColumn(of: "AC/DC", in: wide) == header, "\(table.joined(separator: "\n"))")
    }

    @Test func aSourceCanBeUnsubscribedAndSubscribedAgain() throws {
        // Given a synced podcast
        let origin = try TestOrigin()
        defer { origin.stop() }
        let url = origin.serveFeed(path: "/owls.rss", xml: podcast(origin))
        let cli = CLIRunner()
        defer { cli.removeLibrary() }
        #expect(try cli.run("source", "add", "owls", url).status == 0)
        #expect(try cli.run("sync").status == 0)

        // When the user unsubscribes it (the mount then lists only its downloaded items)
        let unsubscribe = try cli.run("source", "unsubscribe", "owls")
        #expect(unsubscribe.status == 0, "\(unsubscribe.stderr)")
        #expect(try cli.run("source", "list").stdout.contains("owls  no"))
        // And subscribes it again
        let subscribe = try cli.run("source", "subscribe", "owls")
        #expect(subscribe.status == 0, "\(subscribe.stderr)")
        #expect(try cli.run("source", "list").stdout.contains("owls  yes"))
        // And an unknown source is a clear error
        let unknown = try cli.run("source", "subscribe", "nosuch")
        #expect(unknown.status != 0 && unknown.stderr.contains("no source named 'nosuch'"), "\(unknown.stderr)")
    }

    @Test func lsJSONHasTheDesignsFields() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let url = origin.serveFeed(path: "/owls.rss", xml: podcast(origin))
        let cli = CLIRunner()
        defer { cli.removeLibrary() }
        try cli.run("source", "add", "owls", url)
        try cli.run("sync")

        let output = try cli.run("ls", "--json", "--source", "owls")

        let items = try #require(try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [[String: Any]])
        #expect(items.count == 2)
        let required = ["id", "source", "contentId", "title", "fileName", "path", "type", "state", "size",
                        "bytes", "progress", "licence", "licenceExpires", "categories"]
        for item in items {
            for key in required { #expect(item[key] != nil, "missing \(key)") }
        }
        let first = try #require(items.first { $0["contentId"] as? String == "owl-1" })
        #expect(first["path"] as? String == "sources/owls/Owls at Dusk [owl-1].mp3")
        #expect(first["state"] as? String == "discovered")
        #expect(first["licence"] as? String == "none")
        #expect(first["licenceExpires"] as? String == "never")
    }

    @Test func lsJSONPrintsAsItReadsTheBytesOfAWholeArray() throws {
        // Given a feed whose library order (source, title) is also its order by name, with an
        // item in no category (an empty array inside an element)
        let origin = try TestOrigin()
        defer { origin.stop() }
        let url = origin.serveFeed(path: "/owls.rss", xml: podcast(origin))
        let cli = CLIRunner()
        defer { cli.removeLibrary() }
        try cli.run("source", "add", "owls", url)
        try cli.run("sync")

        // When it is listed as read (no --sort) and as one sorted array
        let streamed = try cli.run("ls", "--json")
        let whole = try cli.run("ls", "--json", "--sort", "name")
        let streamedEmpty = try cli.run("ls", "--json", "--state", "queued")
        let wholeEmpty = try cli.run("ls", "--json", "--state", "queued", "--sort", "name")

        // Then both print the same bytes, empty or not
        #expect(streamed.status == 0 && whole.status == 0, "\(streamed.stderr) \(whole.stderr)")
        #expect(streamed.stdout.contains("\"categories\" : [\n\n    ]"), "\(streamed.stdout)")
        #expect(streamed.stdout == whole.stdout)
        #expect(streamedEmpty.stdout == "[\n\n]\n")
        #expect(streamedEmpty.stdout == wholeEmpty.stdout)
    }

    @Test func lsSortsAndFiltersAsTheMountsListsDo() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let url = origin.serveFeed(path: "/owls.rss", xml: podcast(origin))
        origin.serve("/owl-2.mp3", .generated(size: 8192, seed: 2, contentType: "audio/mpeg"))
        let cli = CLIRunner()
        defer { cli.removeLibrary() }
        try cli.run("source", "add", "owls", url)
        try cli.run("sync")
        func files(_ arguments: String...) throws -> [String] {
            let output = try cli.run(["ls", "--json"] + arguments)
            #expect(output.status == 0, "\(output.stderr)")
            let items = try #require(try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [[String: Any]])
            return items.compactMap { $0["fileName"] as? String }
        }
        #expect(try files("--sort", "size") == ["Owls at Dusk [owl-1].mp3", "Bats [owl-2].mp3"])
        #expect(try files("--sort", "name") == ["Bats [owl-2].mp3", "Owls at Dusk [owl-1].mp3"])
        #expect(try files("--recent").isEmpty)
        // When one is downloaded, it is the recent one, and a list of states finds it
        let download = try cli.run("download", "--wait", "owls/owl-2")
        #expect(download.status == 0, "\(download.stderr)")
        #expect(try files("--recent") == ["Bats [owl-2].mp3"])
        #expect(try files("--state", "cached,queued") == ["Bats [owl-2].mp3"])
        #expect(try files("--state", "queued").isEmpty)
        // Repeated, as scripts build it: the union (the last one alone was taken)
        #expect(try files("--state", "queued", "--state", "cached") == ["Bats [owl-2].mp3"])
        #expect(try files("--state", "discovered, cached", "--sort", "downloaded").first == "Bats [owl-2].mp3")
        let bad = try cli.run("ls", "--sort", "colour")
        #expect(bad.status != 0 && bad.stderr.contains("colour"), "\(bad.stderr)")
        // Cached and not watched: in --unwatched until marked watched; played sets a resume point
        #expect(try files("--unwatched") == ["Bats [owl-2].mp3"])
        #expect(try cli.run("played", "owls/owl-2", "0", "12").status == 0)
        let listed = try cli.run("ls", "--json", "--unwatched")
        #expect(listed.stdout.contains("\"position\" : 12"), "\(listed.stdout)")
        #expect(try cli.run("watched", "owls/owl-2").status == 0)
        #expect(try files("--unwatched").isEmpty)
        #expect(try cli.run("unwatched", "owls/owl-2").status == 0)
        #expect(try files("--unwatched") == ["Bats [owl-2].mp3"])
        let reversed = try cli.run("played", "owls/owl-2", "30", "10")
        #expect(reversed.status != 0 && reversed.stderr.contains("after the end"), "\(reversed.stderr)")
    }

    @Test func libraryFlagWinsOverTheEnvironment() throws {
        let cli = CLIRunner()
        defer { cli.removeLibrary() }
        let other = FileManager.default.temporaryDirectory.appendingPathComponent("offlinefs-flag-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: other) }

        try cli.run("source", "add", "a", "http://127.0.0.1:9/feed.rss", "--library", other.path)

        #expect(FileManager.default.fileExists(atPath: other.appendingPathComponent("library.sqlite").path))
        #expect(try cli.run("source", "list").stdout.contains("127.0.0.1:9") == false)
    }

    @Test func policiesCanBeSetAndRead() throws {
        let cli = CLIRunner()
        defer { cli.removeLibrary() }

        let set = try cli.run("set", "cache-limit", "20G")
        let get = try cli.run("get", "cache-limit")
        let bad = try cli.run("set", "cache-limit", "lots")
        let unknown = try cli.run("get", "colour")

        #expect(set.status == 0)
        #expect(get.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "20GiB")
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("cache-limit"), "\(bad.stderr)")
        #expect(unknown.status != 0)
        #expect(unknown.stderr.contains("unknown policy"), "\(unknown.stderr)")
    }

    @Test func mistakesGiveAClearErrorAndANonZeroStatus() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let cli = CLIRunner()
        defer { cli.removeLibrary() }

        let badURL = try cli.run("source", "add", "x", "ftp://example.com/feed")
        try cli.run("source", "add", "gone", origin.url("/missing.rss"))
        let failedSync = try cli.run("sync")
        let duplicate = try cli.run("source", "add", "gone", origin.url("/other.rss"))
        let badState = try cli.run("ls", "--state", "sleeping")
        let unknownSource = try cli.run("sync", "nobody")

        #expect(badURL.status != 0 && badURL.stderr.contains("http"), "\(badURL.stderr)")
        #expect(failedSync.status == 1 && failedSync.stderr.contains("HTTP 404"), "\(failedSync.stderr)")
        #expect(duplicate.status != 0 && duplicate.stderr.contains("gone"), "\(duplicate.stderr)")
        #expect(badState.status != 0 && badState.stderr.contains("unknown state"), "\(badState.stderr)")
        #expect(unknownSource.status != 0 && unknownSource.stderr.contains("nobody"), "\(unknownSource.stderr)")
        #expect(try cli.run("source", "list").stdout.contains("HTTP 404"), "the error stays on the source")
    }

    @Test func jsonListsGiveEveryErrorAndLockedField() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let cli = CLIRunner()
        defer { cli.removeLibrary() }
        // Given a synced podcast, one of its episodes locked, and a source whose feed is gone
        try cli.run("source", "add", "owls", origin.serveFeed(path: "/owls.rss", xml: podcast(origin)))
        try cli.run("sync")
        try cli.run("source", "add", "gone", origin.url("/missing.rss"))
        try cli.run("sync", "gone")
        let ids = try #require(JSONSerialization.jsonObject(with: Data(cli.run("ls", "--json").stdout.utf8)) as? [[String: Any]])
            .compactMap { $0["id"] as? Int }
        #expect(try cli.run("lock", String(ids[0])).status == 0)
        // When a script reads the JSON lists
        let sources = try #require(JSONSerialization.jsonObject(with: Data(cli.run("source", "list", "--json").stdout.utf8))
            as? [[String: Any]])
        let items = try #require(JSONSerialization.jsonObject(with: Data(cli.run("ls", "--json").stdout.utf8)) as? [[String: Any]])
        // Then every source has `error` and `lastSync` (null when there is none), every item `locked`
        let owls = try #require(sources.first { $0["name"] as? String == "owls" })
        let gone = try #require(sources.first { $0["name"] as? String == "gone" })
        #expect(owls["error"] is NSNull && owls["lastSync"] is String)
        #expect((gone["error"] as? String)?.contains("404") == true)
        #expect(items.map { $0["locked"] as? Bool } == ids.map { $0 == ids[0] })
    }

    @Test func versionIsPrinted() throws {
        let output = try CLIRunner().run("--version")
        #expect(output.status == 0)
        #expect(output.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ".").count == 3)
    }
}
