import Foundation
import OfflineTestSupport
import Testing

/// Each fault observed from the wire: a raw client where the exact bytes and the way the
/// connection ends matter, curl where its verdict (exit code) is the point.
@Suite("TestOrigin faults")
struct TestOriginFaultTests {
    static let size: Int64 = 100_000
    static let content = TestOrigin.generatedBytes(size: size, seed: 11)

    private func origin(_ fault: Fault? = nil, times: Int? = nil) throws -> TestOrigin {
        let origin = try TestOrigin()
        origin.serve("/f", .generated(size: Self.size, seed: 11))
        if let fault { origin.setFault("/f", fault, times: times) }
        return origin
    }

    private func fetch(_ origin: TestOrigin, _ headers: [String] = [], timeout: Double = 10) throws -> RawHTTPClient.Response {
        let client = try RawHTTPClient(port: origin.port, timeout: timeout)
        try client.request("GET", "/f", headers: headers)
        return try client.readResponse()
    }

    @Test func statusFaultLimitedToTheNextRequests() throws {
        let origin = try origin(.status(503), times: 2)
        #expect(try fetch(origin).status == 503)
        #expect(try fetch(origin).status == 503)
        #expect(try fetch(origin).status == 200)
        origin.setFault("/unregistered", .status(403))
        #expect(try Curl.run(["-f", origin.url("/unregistered")]).exitCode == 22)
        #expect(origin.requests.last?.status == 403)
    }

    @Test func clearFaultsRestoresNormalAnswers() throws {
        let origin = try origin(.status(500))
        #expect(try fetch(origin).status == 500)
        origin.clearFaults()
        #expect(try fetch(origin).status == 200)
    }

    @Test func ignoreRangeAnswers200WithTheFullBody() throws {
        let response = try fetch(try origin(.ignoreRange), ["Range: bytes=500-"])
        #expect(response.status == 200)
        #expect(response.header("content-range") == nil)
        #expect(same(response.body, Self.content))
    }

    @Test func wrongOffsetShiftsContentRangeAndBody() throws {
        let response = try fetch(try origin(.wrongOffset(100)), ["Range: bytes=1000-1999"])
        #expect(response.status == 206)
        #expect(response.header("content-range") == "bytes 1100-2099/\(Self.size)")
        #expect(same(response.body, Self.content[1100..<2100]))
    }

    @Test func wrongTotalChangesOnlyTheTotal() throws {
        let response = try fetch(try origin(.wrongTotal(123)), ["Range: bytes=0-9"])
        #expect(response.status == 206)
        #expect(response.header("content-range") == "bytes 0-9/123")
        #expect(same(response.body, Self.content[0..<10]))
    }

    @Test func truncateSendsTheFullLengthThenFewerBytesAndCloses() throws {
        let origin = try origin(.truncate(afterBytes: 1000))
        let response = try fetch(origin)
        #expect(response.header("content-length") == "\(Self.size)")
        #expect(same(response.body, Self.content[0..<1000]))
        #expect(!response.complete)
        #expect(response.ending == .eof)
        origin.clearLog()
        #expect(try Curl.run([origin.url("/f")]).exitCode == 18)  // CURLE_PARTIAL_FILE
    }

    @Test func resetEndsTheConnectionWithRST() throws {
        let response = try fetch(try origin(.reset(afterBytes: 1000)))
        #expect(!response.complete)
        #expect(response.body.count <= 1000)
        #expect(same(response.body, Self.content[0..<response.body.count]))
        #expect(response.ending == .reset)
    }

    @Test func noContentLengthSendsTheBodyThenCloses() throws {
        let origin = try origin(.noContentLength)
        let response = try fetch(origin)
        #expect(response.header("content-length") == nil)
        #expect(response.header("connection") == "close")
        #expect(same(response.body, Self.content))
        #expect(response.ending == .eof)
        let curl = try Curl.run([origin.url("/f")])
        #expect(curl.exitCode == 0 && same(curl.body, Self.content))
    }

    @Test func stallSendsHeadersThenWaitsUntilReleased() throws {
        // Given a stall far longer than the test
        let origin = try origin(.stall(seconds: 60))
        let client = try RawHTTPClient(port: origin.port)
        try client.request("GET", "/f")

        // When the client reads, the headers come but the body does not
        let partial = try client.readResponse(bodyTimeout: 0.2)
        #expect(partial.status == 200)
        #expect(partial.body.isEmpty)
        #expect(partial.ending == .timeout)

        // Then releaseStalls lets the rest of the body through
        origin.releaseStalls()
        client.setTimeout(10)
        let rest = try readRemaining(client, count: Int(Self.size))
        #expect(same(rest, Self.content))
    }

    @Test func shortStallEndsByItself() throws {
        let origin = try origin(.stall(seconds: 0.05))
        #expect(same(try fetch(origin).body, Self.content))
    }

    @Test func stallBeforeHeadersSendsNothingUntilReleased() throws {
        let origin = try origin(.stallBeforeHeaders(seconds: 60))
        let client = try RawHTTPClient(port: origin.port, timeout: 0.2)
        try client.request("GET", "/f")
        #expect(client.readTimesOut())
        origin.releaseStalls()
        client.setTimeout(10)
        #expect(same(try client.readResponse().body, Self.content))
    }

    @Test func curlTimesOutOnAStall() throws {
        let origin = try origin(.stall(seconds: 60))
        let result = try Curl.run(["--max-time", "0.5", origin.url("/f")])
        #expect(result.exitCode == 28)  // CURLE_OPERATION_TIMEDOUT
    }

    @Test func trickleAndLatencySlowTheAnswer() throws {
        let origin = try TestOrigin()
        origin.serve("/t", .generated(size: 300, seed: 1))
        origin.setFault("/t", .trickle(bytesPerSecond: 1000))  // 100-byte chunks, 0.1 s apart
        origin.setFault("/t", .latency(milliseconds: 100))
        let start = Date()
        let result = try Curl.run([origin.url("/t")])
        let elapsed = Date().timeIntervalSince(start)
        #expect(same(result.body, TestOrigin.generatedBytes(size: 300, seed: 1)))
        #expect(elapsed >= 0.28, "latency 0.1 s + two trickle gaps of 0.1 s")
        #expect(origin.requests.first?.faults == [.trickle(bytesPerSecond: 1000), .latency(milliseconds: 100)])
    }

    @Test func changeETagEachRequestDefeatsIfRangeAndIfNoneMatch() throws {
        let origin = try origin(.changeETagEachRequest)
        let first = try fetch(origin)
        let etag = try #require(first.header("etag"))
        let second = try fetch(origin, ["If-None-Match: \(etag)"])
        #expect(second.status == 200)
        #expect(second.header("etag") != etag)
        let resumed = try fetch(origin, ["Range: bytes=10-", "If-Range: \(etag)"])
        #expect(resumed.status == 200)
        #expect(same(resumed.body, Self.content))  // the bytes themselves did not change
    }

    @Test func gzipOnRangeLabelsIdentityBytesAsGzip() throws {
        let response = try fetch(try origin(.gzipOnRange), ["Range: bytes=0-99"])
        #expect(response.status == 206)
        #expect(response.header("content-encoding") == "gzip")
        #expect(same(response.body, Self.content[0..<100]))
    }

    @Test func shortRangeAtEndSendsLessThanAsked() throws {
        let response = try fetch(try origin(.shortRangeAtEnd(missing: 10)), ["Range: bytes=99900-"])
        #expect(response.status == 206)
        #expect(response.header("content-range") == "bytes 99900-99989/\(Self.size)")
        #expect(same(response.body, Self.content[99900..<99990]))
    }

    @Test func rangeNotSatisfiableAnswers416EvenForAValidRange() throws {
        let origin = try origin(.rangeNotSatisfiable)
        let response = try fetch(origin, ["Range: bytes=0-9"])
        #expect(response.status == 416)
        #expect(response.header("content-range") == "bytes */\(Self.size)")
        #expect(try fetch(origin).status == 200)  // only range requests are affected
    }

    @Test func closeWithoutResponseAndMalformedResponse() throws {
        let origin = try origin(.closeWithoutResponse, times: 1)
        #expect(try Curl.run([origin.url("/f")]).exitCode == 52)  // CURLE_GOT_NOTHING
        origin.setFault("/f", .malformedResponse, times: 1)
        let weird = try Curl.run([origin.url("/f")])
        #expect(weird.exitCode != 0, "\(weird.stderr)")  // curl: "Unsupported HTTP version"
        #expect(try Curl.run([origin.url("/f")]).exitCode == 0)
        #expect(origin.requests.map(\.status) == [0, 200, 200])
    }

    @Test func goOfflineRefusesAndResetsThenGoOnlineServesAgain() throws {
        // Given a client with an open keep-alive connection
        let origin = try origin()
        let client = try RawHTTPClient(port: origin.port)
        try client.request("GET", "/f")
        _ = try client.readResponse()

        // When the origin goes offline
        origin.goOffline()

        // Then the open connection is dropped and new ones are refused
        #expect(origin.isOffline)
        #expect(client.waitForEnd() != .open)
        #expect(try Curl.run([origin.url("/f")]).exitCode == 7)  // CURLE_COULDNT_CONNECT

        // And going online serves the same URL again
        try origin.goOnline()
        #expect(same(try Curl.run([origin.url("/f")]).body, Self.content))
    }

    @Test func stopEndsStallsAndTricklesPromptly() throws {
        // Given answers stuck in a long stall and a slow trickle
        let origin = try origin(.stall(seconds: 60))
        origin.serve("/slow", .generated(size: 1 << 20, seed: 2))
        origin.setFault("/slow", .trickle(bytesPerSecond: 10))
        let stalled = try RawHTTPClient(port: origin.port)
        try stalled.request("GET", "/f")
        _ = try stalled.readResponse(bodyTimeout: 0.2)
        let trickling = try RawHTTPClient(port: origin.port)
        try trickling.request("GET", "/slow")
        _ = trickling.readAvailable()  // the first trickled bytes (reading all would take days)

        // When the origin stops
        let start = Date()
        origin.stop()

        // Then it does not wait for them, and both connections end
        #expect(Date().timeIntervalSince(start) < 5)
        stalled.setTimeout(5)
        trickling.setTimeout(5)
        #expect(stalled.waitForEnd() != .timeout)
        #expect(trickling.waitForEnd() != .timeout)
    }

    @Test func feedsAreServedWithTheirContentTypes() throws {
        let origin = try TestOrigin()
        let rss = origin.serveFeed(path: "/feed.xml", xml: "<rss version=\"2.0\"/>")
        let json = origin.serveFeed(path: "/catalog.json", json: "{}")
        #expect(rss == origin.url("/feed.xml"))
        let client = try RawHTTPClient(port: origin.port)
        try client.request("GET", "/feed.xml")
        #expect(try client.readResponse().header("content-type") == "application/rss+xml; charset=utf-8")
        try client.request("GET", "/catalog.json")
        #expect(try client.readResponse().header("content-type") == "application/json")
        #expect(json.hasSuffix("/catalog.json"))
        #expect(origin.bodyBytesSent == Int64("<rss version=\"2.0\"/>".utf8.count + 2))
    }

    private func readRemaining(_ client: RawHTTPClient, count: Int) throws -> Data {
        // The head was consumed by the first readResponse; what follows is the body.
        var body = Data()
        while body.count < count {
            guard let chunk = client.readAvailable() else { break }
            body.append(chunk)
        }
        return body
    }
}
