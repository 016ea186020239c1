import Foundation
import OfflineHTTP
import OfflineTestSupport
import Testing

@Suite("HTTP exchanges over libcurl against a real origin")
struct HTTPClientTests {
    let client = HTTPClient()

    @Test func getReturnsTheBodyAndValidators() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        origin.serve("/a.bin", .generated(size: 100_000, seed: 7))

        let response = try client.perform(HTTPRequest(url: origin.url("/a.bin"))).get()

        #expect(response.status == 200)
        #expect(response.body == TestOrigin.generatedBytes(size: 100_000, seed: 7))
        #expect(response.etag != nil)
        #expect(response.lastModified != nil)
        #expect(response.contentLength == 100_000)
    }

    @Test func headReturnsTheSizeWithoutTheBody() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        origin.serve("/a.bin", .generated(size: 5_000, seed: 1))

        let response = try client.perform(HTTPRequest(url: origin.url("/a.bin"), method: .head)).get()

        #expect(response.contentLength == 5_000)
        #expect(response.body.isEmpty)
        #expect(origin.requests.map(\.method) == ["HEAD"])
    }

    @Test func aMatchingValidatorGets304() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        origin.serve("/feed", .text("hello"))
        let first = try client.perform(HTTPRequest(url: origin.url("/feed"))).get()

        let second = try client.perform(HTTPRequest(url: origin.url("/feed"), ifNoneMatch: first.etag)).get()

        #expect(second.status == 304)
        #expect(origin.requests.last?.header("If-None-Match") == first.etag)
    }

    @Test func aRangeRequestGetsThoseBytes() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        origin.serve("/a.bin", .generated(size: 10_000, seed: 3))

        let response = try client.perform(HTTPRequest(url: origin.url("/a.bin"), range: ByteRange(1_000, 3_000))).get()

        #expect(response.status == 206)
        #expect(response.body == TestOrigin.generatedBytes(size: 10_000, seed: 3, range: 1_000..<3_000))
        let judged = RangeResponseCheck.judge(asked: ByteRange(1_000, 3_000), expectedTotal: 10_000,
                                              status: response.status, headers: response.headers)
        #expect(judged == .success(.partial(range: ByteRange(1_000, 3_000), total: 10_000)))
    }

    @Test func theByteCapStopsAnAnnouncedBody() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        origin.serve("/big", .generated(size: 1_000_000, seed: 1))

        let result = client.perform(HTTPRequest(url: origin.url("/big"), maxBodyBytes: 10_000))

        #expect(result.failureCode == .tooLarge)
    }

    @Test func theByteCapStopsABodyOfUnknownLength() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        origin.serve("/big", .generated(size: 1_000_000, seed: 1))
        origin.setFault("/big", .noContentLength)

        let result = client.perform(HTTPRequest(url: origin.url("/big"), maxBodyBytes: 10_000))

        #expect(result.failureCode == .tooLarge)
    }

    @Test func aStalledResponseEndsAtTheDeadline() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        origin.serve("/slow", .generated(size: 1_000, seed: 1))
        origin.setFault("/slow", .stallBeforeHeaders(seconds: 30))
        defer { origin.releaseStalls() }

        let result = client.perform(HTTPRequest(url: origin.url("/slow"), timeouts: HTTPTimeouts(total: 0.3)))

        #expect(result.failureCode == .timeout)
    }

    @Test func aTruncatedBodyIsANetworkError() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        origin.serve("/cut", .generated(size: 50_000, seed: 1))
        origin.setFault("/cut", .truncate(afterBytes: 1_000))

        #expect(client.perform(HTTPRequest(url: origin.url("/cut"))).failureCode == .network)
    }

    @Test func redirectLoopsEnd() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        origin.redirect(from: "/a", to: "/b")
        origin.redirect(from: "/b", to: "/a")

        #expect(client.perform(HTTPRequest(url: origin.url("/a"))).failureCode == .tooManyRedirects)
    }

    @Test(arguments: ["file:///etc/passwd", "ftp://127.0.0.1/x", "gopher://127.0.0.1/x"])
    func redirectsToOtherSchemesAreRefused(target: String) throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        origin.redirect(from: "/a", to: target)

        #expect(client.perform(HTTPRequest(url: origin.url("/a"))).failureCode == .unsupportedURL)
    }

    @Test func otherSchemesAreRefusedOutright() {
        #expect(client.perform(HTTPRequest(url: "file:///etc/passwd")).failureCode == .unsupportedURL)
    }

    @Test func aPublicOnlyRequestCannotReachLoopback() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        origin.serve("/secret", .text("metadata"))

        let result = client.perform(HTTPRequest(url: origin.url("/secret"), destinationPolicy: .publicOnly))

        #expect(result.failureCode == .forbiddenDestination)
        #expect(origin.requests.isEmpty, "nothing reached the origin")
    }

    @Test func aDeadOriginCannotBeReached() throws {
        let origin = try TestOrigin()
        let url = origin.url("/x")
        origin.stop()

        #expect(client.perform(HTTPRequest(url: url)).failureCode == .couldNotConnect)
    }

    @Test func manyRequestsInParallelKeepTheirOrder() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        for index in 0..<20 { origin.serve("/f\(index)", .generated(size: Int64(1_000 + index), seed: UInt64(index))) }
        let requests = (0..<20).map { HTTPRequest(url: origin.url("/f\($0)"), method: .head) }

        let sizes = client.performAll(requests, maxParallel: 4).map { try? $0.get().contentLength }

        #expect(sizes == (0..<20).map { Int64(1_000 + $0) })
    }
}

extension Result where Failure == HTTPError {
    var failureCode: HTTPError.Code? {
        if case .failure(let error) = self { return error.code }
        return nil
    }
}
