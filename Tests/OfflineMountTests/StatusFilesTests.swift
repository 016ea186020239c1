import Foundation
import OfflineEngine
import OfflineFUSE
import OfflineMount
import OfflineStore
import Testing

/// The pure parts of the control issue: the status report and its speeds, the xattr tables
/// and the toggles' commands (no kernel).
struct StatusFilesTests {
    let fixtures = TreeUnitTests()

    func summary(_ id: Int64, _ state: ItemState, bytes: Int64 = 0, size: Int64 = 100, error: ItemErrorCode? = nil) -> ItemSummary {
        var item = fixtures.item(id, source: 1, "Item \(id) [c\(id)].mp4", state: state, bytes: bytes)
        item.size = size
        item.error = error
        return ItemSummary(fixtures.listing(item, "acme", [["news"]]), licence: nil)
    }

    @Test func statusListsEveryRequestedItemBusiestFirstWithSpeedAndETA() {
        // Given two renders a second apart, item 3 downloading 2 KiB in between
        func items(downloaded: Int64) -> [ItemSummary] {
            [summary(1, .cached, bytes: 100), summary(2, .discovered), summary(3, .downloading, bytes: downloaded, size: 1_000_000),
             summary(4, .failed, error: .httpError), summary(5, .queued)]
        }
        var meter = SpeedMeter()
        _ = StatusReport.rows(items(downloaded: 25), meter: &meter, at: 100)
        let rows = StatusReport.rows(items(downloaded: 2073), meter: &meter, at: 101)
        // Then the requested items come busiest first, the downloading one with its speed and ETA
        #expect(rows.map(\.id) == [3, 5, 4, 1])
        #expect(rows[0].speed == 2048)
        #expect(rows[0].eta == ((1_000_000 - 2073) / 2048.0).rounded(.up))
        #expect(rows[3].speed == nil)  // only downloading items have a speed
        let table = StatusReport.table(rows, now: Date(timeIntervalSince1970: 0))
        let lines = table.split(separator: "\n").map(String.init)
        #expect(lines[0].contains("1 downloading, 1 queued, 1 failed, 1 cached"))
        #expect(lines[1].hasPrefix("STATE"))
        #expect(lines[2].hasPrefix("downloading") && lines[2].contains("2.0 KiB/s") && lines[2].contains("8m08s")
            && lines[2].contains("sources/acme/Item 3 [c3].mp4"), "\(lines[2])")
        #expect(lines[4].contains("(http-error)"))
        #expect(StatusReport.table([], now: Date()).contains("nothing requested"))
    }

    @Test func aSpeedIsMeasuredOverTheWindowAndForgottenWhenTheDownloadEnds() {
        var meter = SpeedMeter(window: 3)
        meter.record(7, bytes: 0, at: 0)
        meter.record(7, bytes: 1_000, at: 0.1)
        #expect(meter.speed(7) == nil, "two samples 0.1 s apart tell nothing yet")
        for second in 1...10 { meter.record(7, bytes: Int64(second) * 1_000 + (second > 6 ? 9_000 * Int64(second - 6) : 0), at: Double(second)) }
        // From second 7 on it gains 10 kB a second: the speed follows within the window
        #expect(meter.speed(7) == 10_000)
        #expect(meter.eta(7, size: 100_000) == ((100_000 - 46_000) / 10_000.0).rounded(.up))
        // Bytes discarded (an eviction): measured afresh
        meter.record(7, bytes: 500, at: 11)
        #expect(meter.speed(7) == nil)
        // An item no longer downloading is forgotten at the next render
        var rows = [summary(7, .cached, bytes: 100)]
        rows = StatusReport.rows(rows, meter: &meter, at: 12)
        #expect(meter.speed(7) == nil && rows[0].speed == nil)
    }

    @Test func statusJSONCarriesTheDesignFields() throws {
        var meter = SpeedMeter()
        _ = StatusReport.rows([summary(3, .downloading, bytes: 40)], meter: &meter, at: 0)
        let rows = StatusReport.rows([summary(3, .downloading, bytes: 50)], meter: &meter, at: 1)
        let json = try JSONSerialization.jsonObject(with: Data(StatusReport.json(rows, now: Date()))) as? [String: Any]
        let item = try #require((json?["items"] as? [[String: Any]])?.first)
        for field in ["id", "source", "contentId", "title", "fileName", "path", "type", "state", "error", "size", "bytes",
                      "progress", "licence", "licenceExpires", "categories", "speed", "eta",
                      "mediaURL", "mimeType", "duration", "published", "downloaded", "lastPlayed"] {
            #expect(item[field] != nil, "\(field)")
        }
        #expect(item["error"] is NSNull, "no error: null, not left out")
        #expect(item["downloaded"] is NSNull && item["lastPlayed"] is NSNull, "never downloaded nor played: null, not left out")
        #expect(item["state"] as? String == "downloading")
        #expect(item["eta"] as? Double == 5)
        #expect(json?["time"] is String)
    }

    @Test func itemAttributesFollowTheDesignAndLeaveOutMissingValues() {
        var item = fixtures.item(7, source: 1, "A [c7].mp4", state: .downloading, bytes: 33)
        item.mimeType = "video/mp4"
        let table = Dictionary(uniqueKeysWithValues: Xattrs.item(item, source: "acme", categories: [["news", "local"], ["family"]],
                                                                 licence: nil))
        #expect(table["user.offline.state"] == "downloading")
        #expect(table["user.offline.progress"] == "0.3300")
        #expect(table["user.offline.bytes"] == "33")
        #expect(table["user.offline.size"] == "100")
        #expect(table["user.offline.licence"] == "none")
        #expect(table["user.offline.licence.expires"] == "never")
        #expect(table["user.offline.content-id"] == "c7")
        #expect(table["user.offline.source"] == "acme")
        #expect(table["user.offline.categories"] == "news/local, family")
        #expect(table["user.offline.locked"] == "0")
        #expect(table["user.offline.download"] == "on")
        #expect(table["user.xdg.origin.url"] == "http://h/7")
        #expect(table["user.mime_type"] == "video/mp4")
        #expect(table["user.offline.error"] == nil && table["user.offline.downloaded-at"] == nil && table["user.xdg.comment"] == nil)
    }

    @Test(arguments: [
        (ItemState.discovered, "on", [LibraryCommand.download(item: "7", options: .init())]),
        (.paused, "on", [.resume(item: "7")]),
        (.failed, "on\n", [.resume(item: "7")]),
        (.queued, "on", []),
        (.downloading, "paused", [.pause(item: "7")]),
        (.paused, "paused", []),
        (.downloading, "off", [.cancel(item: "7")]),
        (.cached, "off", [.evict(item: "7")]),
        (.discovered, "off", []),
    ])
    func downloadToggleMapsToCommands(state: ItemState, value: String, commands: [LibraryCommand]) {
        let item = fixtures.item(7, source: 1, "A [c7].mp4", state: state)
        #expect(Xattrs.downloadToggle(Array(value.utf8), item: item) == .success(commands))
    }

    @Test func badToggleValuesAreEINVAL() {
        let item = fixtures.item(7, source: 1, "A [c7].mp4", state: .queued)
        for value in ["", "yes", "ON", "1"] {
            #expect(Xattrs.downloadToggle(Array(value.utf8), item: item) == .failure(.invalidArgument), "\(value)")
        }
        let source = fixtures.source(1, "acme")
        #expect(Xattrs.subscribedToggle(Array("0".utf8), source: source) == .success([.unsubscribe(source: "acme")]))
        #expect(Xattrs.subscribedToggle(Array("1".utf8), source: source) == .success([]))
        #expect(Xattrs.subscribedToggle(Array("on".utf8), source: source) == .failure(.invalidArgument))
        // Spaces around a value are not part of it, before as after
        for value in ["5", "5 ", " 5", " 5\n"] {
            #expect(Xattrs.playStateWrite(Xattrs.position, Array(value.utf8), itemID: 7) == .success([.setPosition(item: "7", seconds: 5)]), "'\(value)'")
        }
    }

    @Test func folderAttributesCountTheirItems() {
        let items = [TreeItem(id: 1, files: [], size: 10, modificationTime: Timestamp(seconds: 0), state: .cached),
                     TreeItem(id: 2, files: [], size: 5, modificationTime: Timestamp(seconds: 0), state: .queued)]
        let table = Dictionary(uniqueKeysWithValues: Xattrs.folder(items: items, source: fixtures.source(1, "acme", subscribed: false)))
        #expect(table["user.offline.items"] == "2")
        #expect(table["user.offline.cached"] == "1")
        #expect(table["user.offline.queued"] == "1")
        #expect(table["user.offline.size"] == "15")
        #expect(table["user.offline.subscribed"] == "0")
        #expect(table["user.xdg.origin.url"] == "http://h/f")
    }
}
