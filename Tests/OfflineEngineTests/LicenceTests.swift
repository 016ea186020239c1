import Foundation
@testable import OfflineEngine
import OfflineStore
import OfflineTestSupport
import Testing

/// Rental, dual expiry, purchase, acquisition and renewal through a licence URL, with the
/// clock moved instead of waited for.
@Suite struct LicenceTests {
    @Test func playbackIsARunOfTwoMebibytesOrATenthOfAShortClip() {
        // The demo's 114 KB rental: a tenth of it
        #expect(LicenceClock.playbackThreshold(size: 114_094) == 11_409)
        // A long film: 2 MiB, as with an unknown size
        #expect(LicenceClock.playbackThreshold(size: 2_000_000_000) == 2 << 20)
        #expect(LicenceClock.playbackThreshold(size: nil) == 2 << 20)
    }

    /// `acquire` preloads a rental's licence (as Brightcove's SDK does) without fetching
    /// media; before it, the item says `not-acquired`, not `never`.
    @Test func acquireSetsARentalsExpiryWithoutDownloading() throws {
        let f = try EngineFixture()
        defer { f.close() }
        let terms = LicenceTerms(kind: .rental, rentalDuration: 3600, playDuration: 600)
        let item = try f.addItem("film.mp4", size: 5000, licence: terms)
        #expect(LicenceClock.expiryText(try f.store.licence(itemID: item.id)) == "not-acquired")
        #expect(LicenceClock.playExpiryText(try f.store.licence(itemID: item.id)) == "not-started")
        f.start()
        try f.perform(.acquire(item: "src/film.mp4"))
        try waitUntil { try f.store.licence(itemID: item.id)?.acquiredAt != nil }
        let licence = try #require(try f.store.licence(itemID: item.id))
        #expect(licence.expiresAt == f.clock.now().addingTimeInterval(3600))
        #expect(LicenceClock.expiryText(licence) == f.clock.now().addingTimeInterval(3600).formatted(.iso8601))
        // Nothing of the media was fetched, and the item is still only listed
        #expect(f.origin.requests(for: "/film.mp4").isEmpty)
        #expect(try f.item(item).state == .discovered)
        #expect(try f.item(item).bytesPresent == 0)
        // When the rental runs out, never downloaded: it expires as a downloaded one does
        // (the licence-expired hook runs on that line), and renew lists it again
        f.advance(3600)
        #expect(try f.item(item).state == .failed && f.item(item).error == .licenceExpired)
        _ = try f.commands.perform(.renew(item: "src/film.mp4"))
        try waitUntil { try f.item(item).state == .discovered }
    }

    @Test func rentalExpiresAfterItsDurationAndRenewRestoresIt() throws {
        let f = try EngineFixture()
        defer { f.close() }
        let item = try f.addItem("a.mp4", size: 5000, licence: LicenceTerms(kind: .rental, rentalDuration: 3600))
        f.start()
        try f.perform(.download(item: "src/a.mp4", options: DownloadOptions()))
        try f.wait(item, .cached)
        // Acquired at download: expires one rental duration later
        let licence = try #require(try f.store.licence(itemID: item.id))
        #expect(licence.acquiredAt == f.clock.now())
        #expect(licence.expiresAt == f.clock.now().addingTimeInterval(3600))
        f.advance(3599)
        #expect(try f.item(item).state == .cached)
        f.advance(1)
        let expired = try f.item(item)
        #expect(expired.state == .failed)
        #expect(expired.error == .licenceExpired)
        #expect(expired.bytesPresent == 5000)
        // Renew: a new rental from now, the cached bytes usable again
        _ = try f.commands.perform(.renew(item: "src/a.mp4"))
        try waitUntil { try f.item(item).state == .cached }
        #expect(try f.store.licence(itemID: item.id)?.expiresAt == f.clock.now().addingTimeInterval(3600))
    }

    @Test func dualExpiryStartsAtTheFirstRunOfTwoMiB() throws {
        let f = try EngineFixture()
        defer { f.close() }
        let terms = LicenceTerms(kind: .rental, rentalDuration: 86_400, playDuration: 600)
        let item = try f.addItem("a.mp4", size: 3 << 20, licence: terms)
        f.start()
        try f.perform(.download(item: "src/a.mp4", options: DownloadOptions()))
        try f.wait(item, .cached)
        let acquired = f.clock.now()
        // A header read (a thumbnailer) does not start the play clock
        f.advance(100)
        let playback = try #require(f.engine.transfers.fetcher.startPlayback(itemID: item.id, size: 3 << 20))
        playback.read(offset: 0, length: 65_536)
        f.engine.licences.drain()
        #expect(try f.store.licence(itemID: item.id)?.firstPlayedAt == nil)
        // Nor does a frame grab (`ffmpeg -ss`: the header, then one read far in)
        playback.read(offset: 2 << 20, length: 96 << 10)
        f.engine.licences.drain()
        #expect(try f.store.licence(itemID: item.id)?.firstPlayedAt == nil)
        // A run of reads past 2 MiB does: the earlier of the two clocks wins
        for offset in stride(from: Int64(0), to: 2 << 20, by: 256 << 10) { playback.read(offset: offset, length: 256 << 10) }
        playback.read(offset: 2 << 20, length: 4096)
        f.engine.licences.drain()
        let played = try #require(try f.store.licence(itemID: item.id))
        #expect(played.firstPlayedAt == acquired.addingTimeInterval(100))
        #expect(played.expiresAt == acquired.addingTimeInterval(700))
        f.engine.scheduler.tickNow()
        f.advance(599)
        #expect(try f.item(item).state == .cached)
        f.advance(1)
        #expect(try f.item(item).error == .licenceExpired)
    }

    /// A player streaming a rental nobody downloaded or acquired takes its licence at the
    /// first playback: both clocks run from there, and the expiry shows.
    @Test func theFirstPlaybackOfARentalNotAcquiredAcquiresIt() throws {
        let f = try EngineFixture()
        defer { f.close() }
        f.origin.serve("/licence/a", .text(#"{"kind": "rental", "rentalDuration": 3600, "playDuration": 300}"#,
                                           contentType: "application/json"))
        let (item, licence) = try playARentalNotAcquired(f, catalogRental: 999_999)
        #expect(f.origin.requests(for: "/licence/a").count == 1)
        #expect(licence.acquiredAt == f.clock.now() && licence.firstPlayedAt == f.clock.now())
        #expect(licence.expiresAt == f.clock.now().addingTimeInterval(300))
        #expect(LicenceClock.expiryText(licence) == f.clock.now().addingTimeInterval(300).formatted(.iso8601))
        #expect(try f.item(item).state == .discovered)
        // One expiry was ever recorded: the rental's alone (an hour on) would have been warned
        // of too, and named the wrong time
        let lines = try f.store.events().filter { $0.itemID == item.id }.map(\.message)
        let playExpiry = LicenceClock.iso(f.clock.now().addingTimeInterval(300)), rentalExpiry = LicenceClock.iso(f.clock.now().addingTimeInterval(3600))
        #expect(lines.contains("licence acquired at first playback: rental, expires \(playExpiry)"), "\(lines)")
        #expect(!lines.contains { $0.contains(rentalExpiry) }, "\(lines)")
    }

    /// When the licence server cannot be reached, the playback still starts the play clock,
    /// and the expiry it sets is shown instead of `not-acquired`.
    @Test func aFirstPlaybackWhoseAcquisitionFailsStillShowsItsExpiry() throws {
        let f = try EngineFixture()
        defer { f.close() }
        f.origin.serve("/licence/a", .text("no", contentType: "text/plain"))
        f.origin.setFault("/licence/a", .status(503))
        let (item, licence) = try playARentalNotAcquired(f, catalogRental: 3600, catalogPlay: 300)
        #expect(licence.acquiredAt == nil)
        #expect(LicenceClock.expiryText(licence) == f.clock.now().addingTimeInterval(300).formatted(.iso8601))
        #expect(try f.store.events().contains { $0.itemID == item.id && $0.message.hasPrefix("not acquired at first playback: ") })
    }

    /// A rental with the licence URL `/licence/a`, played through its first 2 MiB by a player
    /// before anything acquired it; the item and its licence once the playback is recorded.
    private func playARentalNotAcquired(_ f: EngineFixture, catalogRental: Double,
                                        catalogPlay: Double? = nil) throws -> (Item, Licence) {
        let terms = LicenceTerms(kind: .rental, rentalDuration: catalogRental, playDuration: catalogPlay,
                                 licenceURL: f.origin.url("/licence/a"))
        let item = try f.addItem("a.mp4", size: 3 << 20, licence: terms)
        f.start()
        let playback = try #require(f.engine.transfers.fetcher.startPlayback(itemID: item.id, size: 3 << 20))
        playback.read(offset: 0, length: (2 << 20) + 4096)
        f.engine.licences.drain()
        return (item, try #require(try f.store.licence(itemID: item.id)))
    }

    @Test func licenceURLGivesTheTermsAndRenews() throws {
        let f = try EngineFixture()
        defer { f.close() }
        f.origin.serve("/licence/a", .text(#"{"kind": "rental", "rentalDuration": 120, "key": "AAECAwQFBgcICQoLDA0ODw=="}"#,
                                           contentType: "application/json"))
        let terms = LicenceTerms(kind: .rental, rentalDuration: 999_999, licenceURL: f.origin.url("/licence/a"))
        let item = try f.addItem("a.mp4", size: 5000, licence: terms)
        f.start()
        try f.perform(.download(item: "src/a.mp4", options: DownloadOptions()))
        try f.wait(item, .cached)
        let licence = try #require(try f.store.licence(itemID: item.id))
        #expect(licence.terms.rentalDuration == 120)
        #expect(licence.key?.count == 16)
        #expect(licence.expiresAt == f.clock.now().addingTimeInterval(120))
        f.advance(60)
        _ = try f.commands.perform(.renew(item: "src/a.mp4"))
        try waitUntil { f.origin.requests(for: "/licence/a").count == 2 }
        try waitUntil { try f.store.licence(itemID: item.id)?.expiresAt == f.clock.now().addingTimeInterval(120) }
    }

    @Test func purchaseNeverExpires() throws {
        let f = try EngineFixture()
        defer { f.close() }
        let item = try f.addItem("a.mp4", size: 5000, licence: LicenceTerms(kind: .purchase))
        f.start()
        try f.perform(.download(item: "src/a.mp4", options: DownloadOptions()))
        try f.wait(item, .cached)
        #expect(try f.store.licence(itemID: item.id)?.expiresAt == nil)
        f.advance(10 * 365 * 86_400)
        #expect(try f.item(item).state == .cached)
    }

    @Test func expiredLicenceStopsADownloadRequest() throws {
        let f = try EngineFixture()
        defer { f.close() }
        let item = try f.addItem("a.mp4", size: 5000, licence: LicenceTerms(kind: .rental, rentalDuration: 10))
        var licence = try #require(try f.store.licence(itemID: item.id))
        licence.acquiredAt = f.clock.now().addingTimeInterval(-20)
        licence.expiresAt = f.clock.now().addingTimeInterval(-10)
        try f.store.putLicence(licence)
        f.start()
        try f.perform(.download(item: "src/a.mp4", options: DownloadOptions()))
        #expect(try f.wait(item, .failed).error == .licenceExpired)
    }
}
