import Foundation
import Glibc
import OfflineTestSupport
import Testing

@Suite("TestOrigin basics")
struct TestOriginBasicTests {
    @Test func fullGetMatchesGeneratedBytesAndSHA256() throws {
        // Given a generated resource of an odd size (not a multiple of the 8-byte word)
        let origin = try TestOrigin()
        let size: Int64 = (1 << 20) + 5
        origin.serve("/media/a.bin", .generated(size: size, seed: 42))

        // When curl fetches it
        let result = try Curl.run([origin.url("/media/a.bin")])

        // Then the bytes and their SHA-256 are the generator's
        #expect(result.exitCode == 0, "\(result.stderr)")
        let expected = TestOrigin.generatedBytes(size: size, seed: 42)
        #expect(same(result.body, expected))
        let generatorHash = GeneratedBytes(size: size, seed: 42).sha256Hex()
        #expect(generatorHash == SHA256Hasher.hex(of: result.body))
        #expect(generatorHash == (try Curl.sha256sum(result.body)))
        #expect(origin.bodyBytesSent(for: "/media/a.bin") == size)
    }

    @Test func headHasGetHeadersWithoutBody() throws {
        let origin = try TestOrigin()
        origin.serve("/v.mp4", .generated(size: 1000, seed: 1, contentType: "video/mp4"))
        let client = try RawHTTPClient(port: origin.port)

        try client.request("HEAD", "/v.mp4")
        let head = try client.readResponse(forHead: true)
        #expect(head.status == 200)
        #expect(head.header("content-length") == "1000")
        #expect(head.header("content-type") == "video/mp4")
        #expect(head.header("accept-ranges") == "bytes")
        #expect(head.header("etag") == "\"g-1000-1\"")
        #expect(head.header("last-modified") == "Mon, 01 Jan 2024 00:00:00 GMT")

        // No body followed the HEAD: the next answer on the connection starts cleanly.
        try client.request("GET", "/v.mp4")
        let get = try client.readResponse()
        #expect(get.status == 200)
        #expect(same(get.body, TestOrigin.generatedBytes(size: 1000, seed: 1)))
    }

    @Test func unknownPathIs404AndOtherMethodsAre405() throws {
        let origin = try TestOrigin()
        origin.serve("/x", .text("x"))
        let client = try RawHTTPClient(port: origin.port)
        try client.request("GET", "/missing")
        #expect(try client.readResponse().status == 404)
        try client.send("POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc")
        let post = try client.readResponse()
        #expect(post.status == 405)
        #expect(post.header("allow") == "GET, HEAD")
        // The request body was consumed: the connection still works.
        try client.request("GET", "/x")
        #expect(try client.readResponse().body == Data("x".utf8))
    }

    @Test func keepAliveServesTwoRequestsOnOneConnectionAndHonoursClose() throws {
        let origin = try TestOrigin()
        origin.serve("/a", .text("first"))
        origin.serve("/b", .text("second"))
        let client = try RawHTTPClient(port: origin.port)

        try client.request("GET", "/a")
        #expect(try client.readResponse().body == Data("first".utf8))
        try client.request("GET", "/b", headers: ["Connection: close"])
        let second = try client.readResponse()
        #expect(second.body == Data("second".utf8))
        #expect(second.header("connection") == "close")
        #expect(client.waitForEnd() == .eof)

        let log = origin.requests
        #expect(log.count == 2)
        #expect(log[0].connection == log[1].connection)
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() throws {
        let origin = try TestOrigin()
        origin.serve("/a", .text("A"))
        origin.serve("/b", .text("B"))
        let client = try RawHTTPClient(port: origin.port)
        try client.send("GET /a HTTP/1.1\r\nHost: h\r\n\r\nGET /b HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(try client.readResponse().body == Data("A".utf8))
        #expect(try client.readResponse().body == Data("B".utf8))
    }

    @Test func http10ClosesUnlessKeepAlive() throws {
        let origin = try TestOrigin()
        origin.serve("/a", .text("A"))
        let client = try RawHTTPClient(port: origin.port)
        try client.send("GET /a HTTP/1.0\r\n\r\n")
        #expect(try client.readResponse().status == 200)
        #expect(client.waitForEnd() == .eof)
    }

    @Test func queriesMatchExactlyWhenRegisteredAndAreIgnoredOtherwise() throws {
        let origin = try TestOrigin()
        origin.serve("/feed", .text("any"))
        origin.serve("/feed?page=2", .text("page two"))
        origin.serve("/odd name.mp4", .text("decoded"))
        #expect(try Curl.run([origin.url("/feed?page=2")]).body == Data("page two".utf8))
        #expect(try Curl.run([origin.url("/feed?page=3")]).body == Data("any".utf8))
        #expect(try Curl.run([origin.url("/odd%20name.mp4")]).body == Data("decoded".utf8))
        #expect(origin.requests(for: "/feed").count == 2)
        #expect(origin.requests(for: "/feed?page=2").count == 1)
    }

    @Test func fileAndBytesResources() throws {
        let origin = try TestOrigin()
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("origin-file-\(UUID().uuidString)")
        let content = TestOrigin.generatedBytes(size: 70_000, seed: 9)
        try content.write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        origin.serve("/file", .file(url.path))
        origin.serve("/bytes", .bytes(Data([0, 1, 2, 255])))
        origin.serve("/gone", .file("/nonexistent/offlinefs-origin"))

        #expect(same(try Curl.run([origin.url("/file")]).body, content))
        #expect(same(try Curl.run(["-r", "65536-65545", origin.url("/file")]).body, content[65536..<65546]))
        #expect(try Curl.run([origin.url("/bytes")]).body == Data([0, 1, 2, 255]))
        #expect(try Curl.run([origin.url("/gone")]).exitCode == 0)
        #expect(origin.requests(for: "/gone").map(\.status) == [404])
    }

    @Test func redirectsAreFollowedAndLoopsEndInCurlError() throws {
        let origin = try TestOrigin()
        origin.serve("/real", .text("here"))
        origin.redirect(from: "/old", to: "/real")
        origin.redirect(from: "/abs", to: origin.url("/old"), status: 301)
        origin.redirect(from: "/loop1", to: "/loop2")
        origin.redirect(from: "/loop2", to: "/loop1")

        #expect(try Curl.run(["-L", origin.url("/abs")]).body == Data("here".utf8))
        #expect(origin.requests.map(\.status) == [301, 302, 200])
        let loop = try Curl.run(["-L", "--max-redirs", "5", origin.url("/loop1")])
        #expect(loop.exitCode == 47)  // CURLE_TOO_MANY_REDIRECTS
    }

    @Test func requestLogRecordsWhatWasAskedAndAnswered() throws {
        let origin = try TestOrigin()
        origin.serve("/m", .generated(size: 100, seed: 3))
        let client = try RawHTTPClient(port: origin.port)
        try client.request("GET", "/m?x=1", headers: ["Range: bytes=10-19", "X-Test: Yes"])
        _ = try client.readResponse()

        let entry = try #require(origin.requests.first)
        #expect(entry.method == "GET")
        #expect(entry.target == "/m?x=1")
        #expect(entry.path == "/m")
        #expect(entry.header("X-Test") == "Yes")
        #expect(entry.headers["range"] == "bytes=10-19")
        #expect(entry.range == .single(.closed(first: 10, last: 19)))
        #expect(entry.status == 206)
        #expect(origin.bodyBytesSent == 10)

        origin.clearLog()
        #expect(origin.requests.isEmpty)
        #expect(origin.bodyBytesSent == 0)
    }

    @Test func malformedRequestsGet400ClassAnswersAndTheOriginKeepsServing() throws {
        let origin = try TestOrigin()
        origin.serve("/ok", .text("ok"))
        let cases: [(String, Int)] = [
            ("GARBAGE\r\n\r\n", 400),
            ("GET /ok\r\n\r\n", 400),
            ("GET ok HTTP/1.1\r\n\r\n", 400),
            ("GET /ok HTTP/1.1\r\nNoColon\r\n\r\n", 400),
            ("GET /ok HTTP/1.1\r\n folded: x\r\n\r\n", 400),
            ("GET /ok HTTP/2.0\r\n\r\n", 505),
            ("GET /ok HTTP/1.1\r\nContent-Length: -5\r\n\r\n", 400),
            ("GET /ok HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 501),
            ("GET /ok HTTP/1.1\r\nX: " + String(repeating: "a", count: 70_000) + "\r\n\r\n", 431),
        ]
        for (text, status) in cases {
            let client = try RawHTTPClient(port: origin.port)
            try client.send(text)
            #expect(try client.readResponse().status == status, "\(text.prefix(40))")
            #expect(client.waitForEnd() == .eof)
        }
        #expect(try Curl.run([origin.url("/ok")]).body == Data("ok".utf8))
    }

    @Test func stopFreesThePortAndDeinitStops() throws {
        let origin = try TestOrigin()
        let port = origin.port
        origin.serve("/a", .text("A"))
        let idle = try RawHTTPClient(port: port)  // an idle keep-alive connection must not block stop()
        try idle.request("GET", "/a")
        _ = try idle.readResponse()

        origin.stop()
        #expect(idle.waitForEnd() != .open)
        #expect(throws: RawHTTPClient.Failure.self) { try RawHTTPClient(port: port) }
        origin.stop()  // idempotent

        // The same port can be bound again at once, and a dropped origin frees it too.
        do {
            let again = try TestOrigin(port: port)
            #expect(again.port == port)
        }
        let third = try TestOrigin(port: port)
        #expect(third.port == port)
    }

    @Test func eightConcurrentClientsGetTheirOwnBytes() throws {
        let origin = try TestOrigin()
        let size: Int64 = 4 << 20
        for index in 0..<8 { origin.serve("/item\(index)", .generated(size: size, seed: UInt64(index))) }

        // All eight curls run at once; each also asks for a different range.
        let running = try (0..<8).map { index in
            try Curl.Running(["-r", "\(index * 1000)-", origin.url("/item\(index)")])
        }
        for (index, curl) in running.enumerated() {
            let result = try curl.wait()
            #expect(result.exitCode == 0, "\(result.stderr)")
            #expect(same(result.body, TestOrigin.generatedBytes(size: size, seed: UInt64(index), range: Int64(index * 1000)..<size)))
        }
        #expect(origin.requests.count == 8)
        #expect(Set(origin.requests.map(\.connection)).count == 8)
    }
}
