import Foundation
import OfflineTestSupport
import Testing

@Suite("TestOrigin ranges and conditional requests")
struct TestOriginRangeTests {
    static let size: Int64 = 10_000
    static let content = TestOrigin.generatedBytes(size: size, seed: 5)

    private func origin() throws -> TestOrigin {
        let origin = try TestOrigin()
        origin.serve("/r", .generated(size: Self.size, seed: 5))
        return origin
    }

    private func get(_ origin: TestOrigin, _ headers: [String], method: String = "GET") throws -> RawHTTPClient.Response {
        let client = try RawHTTPClient(port: origin.port)
        try client.request(method, "/r", headers: headers)
        return try client.readResponse(forHead: method == "HEAD")
    }

    @Test(arguments: [
        ("bytes=0-0", 0, 0), ("bytes=100-199", 100, 199), ("bytes=9990-", 9990, 9999),
        ("bytes=-10", 9990, 9999), ("bytes=9000-20000", 9000, 9999), ("bytes=-50000", 0, 9999),
        ("bytes=5-6 ", 5, 6),
    ])
    func singleRangesAnswer206(header: String, first: Int, last: Int) throws {
        let response = try get(try origin(), ["Range: \(header)"])
        #expect(response.status == 206)
        #expect(response.header("content-range") == "bytes \(first)-\(last)/\(Self.size)")
        #expect(response.header("content-length") == "\(last - first + 1)")
        #expect(same(response.body, Self.content[first...last]))
    }

    @Test(arguments: ["bytes=10000-", "bytes=20000-30000", "bytes=-0"])
    func unsatisfiableRangesAnswer416(header: String) throws {
        let response = try get(try origin(), ["Range: \(header)"])
        #expect(response.status == 416)
        #expect(response.header("content-range") == "bytes */\(Self.size)")
    }

    @Test(arguments: ["bytes=0-1,5-6", "bytes=5-1", "items=0-1", "bytes=abc", "bytes=-", "bytes=+1-2"])
    func multipleOrInvalidRangesAnswer200WithTheFullBody(header: String) throws {
        let response = try get(try origin(), ["Range: \(header)"])
        #expect(response.status == 200)
        #expect(same(response.body, Self.content))
    }

    @Test func headIgnoresRange() throws {
        let response = try get(try origin(), ["Range: bytes=0-9"], method: "HEAD")
        #expect(response.status == 200)
        #expect(response.header("content-length") == "\(Self.size)")
    }

    @Test func ifRangeWithMatchingValidatorsKeepsTheRange() throws {
        let origin = try origin()
        let etag = try #require(try get(origin, []).header("etag"))
        let byETag = try get(origin, ["Range: bytes=10-19", "If-Range: \(etag)"])
        #expect(byETag.status == 206)
        let byDate = try get(origin, ["Range: bytes=10-19", "If-Range: Mon, 01 Jan 2024 00:00:00 GMT"])
        #expect(byDate.status == 206)
        #expect(same(byDate.body, Self.content[10..<20]))
    }

    @Test(arguments: ["\"other\"", "W/\"g-10000-5\"", "Tue, 02 Jan 2024 00:00:00 GMT", "garbage"])
    func ifRangeMismatchAnswersTheFullBody(validator: String) throws {
        let response = try get(try origin(), ["Range: bytes=10-19", "If-Range: \(validator)"])
        #expect(response.status == 200)
        #expect(same(response.body, Self.content))
    }

    @Test func conditionalRequestsAnswer304() throws {
        let origin = try origin()
        let etag = try #require(try get(origin, []).header("etag"))

        let byETag = try get(origin, ["If-None-Match: \"nope\", \(etag)"])
        #expect(byETag.status == 304)
        #expect(byETag.header("etag") == etag)
        #expect(byETag.header("content-length") == nil)
        #expect(try get(origin, ["If-None-Match: W/\(etag)"]).status == 304)  // weak comparison
        #expect(try get(origin, ["If-None-Match: *"]).status == 304)
        #expect(try get(origin, ["If-Modified-Since: Mon, 01 Jan 2024 00:00:00 GMT"]).status == 304)
        #expect(try get(origin, ["If-Modified-Since: Sun, 31 Dec 2023 23:59:59 GMT"]).status == 200)
        // If-None-Match wins over If-Modified-Since.
        let mismatch = try get(origin, ["If-None-Match: \"old\"", "If-Modified-Since: Mon, 01 Jan 2024 00:00:00 GMT"])
        #expect(mismatch.status == 200)

        let log = origin.requests
        #expect(log[1].header("if-none-match") == "\"nope\", \(etag)")
        #expect(log[1].status == 304)
    }

    @Test func changedContentGetsANewETagSoRevalidationAnswers200() throws {
        // Given a client that has the old version's ETag
        let origin = try origin()
        let oldETag = try #require(try get(origin, []).header("etag"))

        // When the origin content changes (same size, new seed)
        origin.changeContent("/r", .generated(size: Self.size, seed: 6))

        // Then revalidation and If-Range both see the change
        let revalidated = try get(origin, ["If-None-Match: \(oldETag)"])
        #expect(revalidated.status == 200)
        #expect(revalidated.header("etag") != oldETag)
        let resumed = try get(origin, ["Range: bytes=100-", "If-Range: \(oldETag)"])
        #expect(resumed.status == 200)
        #expect(same(resumed.body, TestOrigin.generatedBytes(size: Self.size, seed: 6)))
    }

    @Test func explicitValidatorsAndExtraHeadersAreSent() throws {
        let origin = try TestOrigin()
        let modified = Date(timeIntervalSince1970: 1_000_000_000)
        origin.serve("/e", Resource(.bytes(Data("abc".utf8)), contentType: "text/x", etag: "W/\"weak\"",
                                    lastModified: modified, extraHeaders: [("Cache-Control", "max-age=60")]))
        let client = try RawHTTPClient(port: origin.port)
        try client.request("GET", "/e", headers: ["Range: bytes=1-", "If-Range: W/\"weak\""])
        let response = try client.readResponse()
        #expect(response.status == 200)  // a weak validator never satisfies If-Range
        #expect(response.header("etag") == "W/\"weak\"")
        #expect(response.header("last-modified") == "Sun, 09 Sep 2001 01:46:40 GMT")
        #expect(response.header("cache-control") == "max-age=60")
    }

    @Test func curlResumesWithRange() throws {
        let origin = try origin()
        let result = try Curl.run(["-C", "4000", origin.url("/r")])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(same(result.body, Self.content[4000...]))
        #expect(origin.requests.first?.range == .single(.from(first: 4000)))
    }

    @Test func zeroLengthResource() throws {
        let origin = try TestOrigin()
        origin.serve("/empty", .bytes(Data()))
        let client = try RawHTTPClient(port: origin.port)
        try client.request("GET", "/empty")
        let full = try client.readResponse()
        #expect(full.status == 200 && full.body.isEmpty && full.header("content-length") == "0")
        try client.request("GET", "/empty", headers: ["Range: bytes=0-"])
        let ranged = try client.readResponse()
        #expect(ranged.status == 416)
        #expect(ranged.header("content-range") == "bytes */0")
    }
}
