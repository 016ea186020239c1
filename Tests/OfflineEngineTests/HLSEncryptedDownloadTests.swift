import Foundation
import OfflineEngine
import OfflineStore
import OfflineTestSupport
import Testing

/// AES-128 streams (DESIGN §3): segments stay encrypted in the cache; the key is kept with
/// the licence when the item has one; a key that cannot be fetched fails the item.
@Suite struct HLSEncryptedDownloadTests {
    static let segments = HLSFixtureStreams.segments("aes", count: 4)

    @Test func segmentsStayEncryptedInTheCache() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        // Given an AES-128 stream without licence terms
        try HLSFixtureStreams.serve("aes", on: fixture.origin)
        let item = try fixture.addHLSItem("secret", playlist: "aes/index.m3u8")
        // When it is downloaded
        let result = fixture.download(item)
        // Then it is cached, each segment holding the origin's encrypted bytes
        #expect(result.state == .cached, "\(result)")
        let stream = try #require(fixture.stream(item))
        #expect(stream.isEncrypted)
        try HLSDownloadTests.expectSegmentsMatchOrigin(fixture, item, stream)
        #expect(try fixture.store.item(id: item.id)?.size == (try HLSFixtureStreams.size(Self.segments)))
        // And the key part holds the key (no licence to keep it in)
        let key = try #require(stream.part(named: "key"))
        #expect(try fixture.cachedBytes(item, part: key) == HLSFixtureStreams.data("aes/key.bin"))
        // And the cached first segment is not its decryption (which is MPEG-TS: 0x47 sync bytes)
        let cached = try fixture.cachedBytes(item, part: stream.parts[stream.segmentParts[0]])
        let clear = try Self.decrypt(cached, key: HLSFixtureStreams.data("aes/key.bin"), iv: "00112233445566778899aabbccddeeff")
        #expect(clear.first == 0x47 && clear.count > 188 && clear[clear.startIndex + 188] == 0x47, "the fixture decrypts to MPEG-TS")
        #expect(cached.prefix(clear.count) != clear)
    }

    @Test(arguments: [LicenceTerms(kind: .purchase), LicenceTerms(kind: .rental, rentalDuration: 3600)])
    func keyIsKeptWithTheLicence(terms: LicenceTerms) throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        // Given an AES-128 stream with licence terms and no licence URL
        try HLSFixtureStreams.serve("aes", on: fixture.origin)
        let item = try fixture.addHLSItem("secret", playlist: "aes/index.m3u8", licence: terms)
        // When it is downloaded
        let result = fixture.download(item)
        // Then the 16-byte key from the EXT-X-KEY URI is the licence's key
        #expect(result.state == .cached, "\(result)")
        let licence = try #require(try fixture.store.licence(itemID: item.id))
        #expect(licence.key == (try HLSFixtureStreams.data("aes/key.bin")))
        try HLSDownloadTests.expectSegmentsMatchOrigin(fixture, item, try #require(fixture.stream(item)))
    }

    @Test func keyThatCannotBeFetchedFailsTheItem() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        // Given an AES-128 stream whose key URL answers 404
        try HLSFixtureStreams.serve("aes", on: fixture.origin)
        fixture.origin.remove("/hls/aes/key.bin")
        let item = try fixture.addHLSItem("secret", playlist: "aes/index.m3u8", licence: LicenceTerms(kind: .purchase))
        // When it is downloaded
        let result = fixture.download(item)
        // Then it is not cached: an HTTP error naming the key
        #expect(!result.succeeded, "\(result)")
        #expect(result.error == .httpError, "\(result)")
        #expect(result.message.contains("key"), "\(result.message)")
        #expect(try fixture.store.item(id: item.id)?.state != .cached)
        #expect(try fixture.store.licence(itemID: item.id)?.key == nil)
    }

    /// AES-128-CBC decryption through the openssl command.
    static func decrypt(_ data: Data, key: Data, iv: String) throws -> Data {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("offlinefs-aes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = folder.appendingPathComponent("in"), output = folder.appendingPathComponent("out")
        try data.write(to: input)
        let hexKey = key.map { String(format: "%02x", $0) }.joined()
        let run = try ChildProcess.run(["/usr/bin/openssl", "aes-128-cbc", "-d", "-K", hexKey, "-iv", iv,
                                        "-in", input.path, "-out", output.path])
        try #require(run.status == 0, "openssl: \(run.stderr)")
        return try Data(contentsOf: output)
    }
}
