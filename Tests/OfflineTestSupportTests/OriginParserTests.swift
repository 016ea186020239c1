import Foundation
@testable import OfflineTestSupport
import Testing

/// The pure parts of the origin, table-tested without sockets.
@Suite("TestOrigin parsers and generators")
struct OriginParserTests {
    @Test(arguments: [
        ("bytes=0-499", RangeHeader.single(.closed(first: 0, last: 499))),
        ("bytes=500-", .single(.from(first: 500))),
        ("bytes=-500", .single(.suffix(length: 500))),
        ("BYTES=1-2", .single(.closed(first: 1, last: 2))),
        ("bytes=0-0, 10-", .multiple([.closed(first: 0, last: 0), .from(first: 10)])),
    ] as [(String, RangeHeader)])
    func validRangeHeaders(text: String, expected: RangeHeader) {
        #expect(RangeHeader.parse(text) == expected)
    }

    @Test(arguments: ["", "bytes=", "bytes=a-b", "bytes=5-1", "bytes=1-2,", "bits=0-1", "bytes=--1",
                      "bytes=99999999999999999999-", "bytes=1-2-3", "bytes=0x10-"])
    func invalidRangeHeadersAreIgnored(text: String) {
        #expect(RangeHeader.parse(text) == nil)
    }

    @Test func rangeResolution() {
        #expect(ByteRangeSpec.closed(first: 0, last: 99).resolve(length: 50) == 0..<50)
        #expect(ByteRangeSpec.from(first: 50).resolve(length: 50) == nil)
        #expect(ByteRangeSpec.suffix(length: 10).resolve(length: 5) == 0..<5)
        #expect(ByteRangeSpec.suffix(length: 0).resolve(length: 5) == nil)
        #expect(ByteRangeSpec.from(first: 0).resolve(length: 0) == nil)
    }

    @Test func requestParsing() throws {
        let head = Array("GET http://example.com/a/b?x=1#frag HTTP/1.1\r\nHost: h\r\nX-Two: 1\r\nx-two: 2\r\n".utf8)
        let request = try HTTPRequest.parse(head: head).get()
        #expect(request.method == "GET")
        #expect(request.target == "/a/b?x=1")
        #expect(request.path == "/a/b")
        #expect(request.query == "x=1")
        #expect(request.header("x-two") == "1, 2")
        #expect(!request.wantsClose)
        let bareLF = try HTTPRequest.parse(head: Array("\r\nHEAD / HTTP/1.0\nConnection: keep-alive\n".utf8)).get()
        #expect(bareLF.method == "HEAD" && !bareLF.wantsClose)
    }

    @Test(arguments: [
        "", "GET", "GET /", "GET / HTTP/1.1 extra", " GET / HTTP/1.1", "GET / FTP/1.0",
        "G(T / HTTP/1.1", "GET relative HTTP/1.1", "GET /\u{7F} HTTP/1.1",
        "GET / HTTP/1.1\r\nBad Name: x", "GET / HTTP/1.1\r\n: empty", "GET / HTTP/1.1\r\n\tfolded",
    ])
    func hostileRequestHeadsAreRejected(text: String) {
        guard case .failure = HTTPRequest.parse(head: Array(text.utf8)) else {
            Issue.record("accepted: \(text)")
            return
        }
    }

    @Test func invalidUTF8NeverTraps() {
        let head: [UInt8] = Array("GET /".utf8) + [0xFF, 0xC3] + Array(" HTTP/1.1\r\nX: ".utf8) + [0xFE]
        #expect((try? HTTPRequest.parse(head: head).get()) != nil)
    }

    @Test func httpDates() {
        let date = Date(timeIntervalSince1970: 784_111_777)
        #expect(HTTPDate.format(date) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == 784_111_777)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == nil)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == nil)
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 25:49:37 GMT") == nil)
    }

    @Test func generatedBytesAreRandomAccess() {
        let generator = GeneratedBytes(size: 4099, seed: 77)
        let whole = generator.bytes()
        #expect(whole.count == 4099)
        for (start, end) in [(0, 1), (1, 9), (7, 8), (3, 4099), (4090, 4099), (1000, 3001)] {
            #expect(generator.bytes(in: Int64(start)..<Int64(end)) == whole[start..<end])
        }
        var chunks = Data()
        generator.forEachChunk(in: 5..<4000, chunkSize: 333) { chunks.append(contentsOf: $0) }
        #expect(chunks == whole[5..<4000])
        #expect(GeneratedBytes(size: 4099, seed: 78).bytes() != whole)
        // The stream is fixed forever: tests and fixtures elsewhere may depend on these bytes.
        #expect(Array(GeneratedBytes(size: 8, seed: 0).bytes()) == [0xaf, 0xcd, 0x1d, 0x7b, 0x39, 0xa8, 0x20, 0xe2])  // SplitMix64(0) = 0xe220a8397b1dcdaf
    }

    @Test func sha256MatchesKnownVectorsAndSha256sum() throws {
        #expect(SHA256Hasher.hex(of: Data()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256Hasher.hex(of: Data("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        for size in [55, 56, 63, 64, 65, 1000, 70_001] {
            let data = TestOrigin.generatedBytes(size: Int64(size), seed: UInt64(size))
            var hasher = SHA256Hasher()
            hasher.update(data.prefix(17))  // split updates exercise the pending buffer
            hasher.update(data.dropFirst(17))
            #expect(hasher.finalizeHex() == (try Curl.sha256sum(data)), "size \(size)")
        }
    }

    @Test func plannerAnswersConditionalBeforeRange() throws {
        let request = try HTTPRequest.parse(head: Array("GET /r HTTP/1.1\r\nRange: bytes=0-1\r\nIf-None-Match: \"t\"\r\n".utf8)).get()
        let entity = Entity(length: 10, etag: "\"t\"", lastModified: 0, contentType: "x", extraHeaders: [])
        let plan = ResponsePlanner.plan(request: request, route: .resource(.text("")), entity: entity, faults: [])
        #expect(plan.status == 304)
        #expect(!plan.sendsBody)
    }

    @Test func revisedETagsKeepTheirShape() {
        #expect(OriginConnection.revised("\"abc\"", revision: 2) == "\"abc-r2\"")
        #expect(OriginConnection.revised("W/\"abc\"", revision: 1) == "W/\"abc-r1\"")
    }
}
