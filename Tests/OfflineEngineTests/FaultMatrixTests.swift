import Foundation
import OfflineEngine
import OfflineStore
import OfflineTestSupport
import Testing

/// HARDENING test 10: each misbehaviour of an origin, against a whole-file download. Pass:
/// the item is cached with the origin's SHA-256, or it stops with the matching error, and in
/// every case each byte the store claims is the origin's byte.
@Suite struct FaultMatrixTests {
    enum Expected: Sendable, CustomStringConvertible {
        case cached
        case stopped(ItemState, ItemErrorCode)
        var description: String {
            switch self {
            case .cached: "cached"
            case .stopped(let state, let code): "\(state.rawValue) \(code.rawValue)"
            }
        }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var faults: [(Fault, Int?)]
        var expected: Expected
        var size: Int64 = 1 << 20
        var testDescription: String { "\(name) → \(expected)" }
    }

    static let cases: [Case] = [
        // A resumed request answered 200 (whole file, same ETag): rewritten from byte 0.
        Case(name: "200 to a range request", faults: [(.truncate(afterBytes: 300_000), 1), (.ignoreRange, nil)], expected: .cached),
        Case(name: "206 at the wrong offset", faults: [(.wrongOffset(1000), nil)], expected: .stopped(.idle, .networkError)),
        Case(name: "206 at the wrong offset once", faults: [(.wrongOffset(-7), 1)], expected: .cached),
        Case(name: "short 206 before the end of file", faults: [(.shortRangeAtEnd(missing: 1000), nil)],
             expected: .stopped(.idle, .networkError)),
        Case(name: "wrong Content-Range total (smaller)", faults: [(.wrongTotal(1000), nil)], expected: .stopped(.idle, .networkError)),
        // A larger total is believed at first; the body ends early, the next request is 416
        // with the true size: the file "changed", the download starts over and completes.
        Case(name: "wrong Content-Range total (larger) once", faults: [(.wrongTotal((1 << 20) + 4096), 1)], expected: .cached),
        Case(name: "416 */len to a satisfiable range", faults: [(.rangeNotSatisfiable, nil)], expected: .stopped(.idle, .networkError)),
        Case(name: "416 once", faults: [(.rangeNotSatisfiable, 1)], expected: .cached),
        Case(name: "body shorter than Content-Length", faults: [(.truncate(afterBytes: 400_000), 2)], expected: .cached),
        Case(name: "no length, connection closed", faults: [(.noContentLength, nil)], expected: .cached),
        Case(name: "no length, cut short", faults: [(.noContentLength, nil), (.truncate(afterBytes: 200_000), 1)], expected: .cached),
        Case(name: "no length on a 200", faults: [(.noContentLength, nil), (.ignoreRange, nil)], expected: .cached),
        // A new ETag on every answer: If-Range never matches, the resumed request gets 200,
        // the old bytes are dropped and the whole file is fetched again.
        Case(name: "ETag changing mid-download", faults: [(.changeETagEachRequest, nil), (.truncate(afterBytes: 500_000), 1)],
             expected: .cached),
        Case(name: "gzip on a range", faults: [(.gzipOnRange, nil)], expected: .stopped(.idle, .networkError)),
        Case(name: "latency", faults: [(.latency(milliseconds: 150), nil)], expected: .cached),
        Case(name: "stall mid-body", faults: [(.stall(seconds: 30), 1)], expected: .cached),
        Case(name: "stall before headers, every time", faults: [(.stallBeforeHeaders(seconds: 30), nil)],
             expected: .stopped(.idle, .timeout), size: 10_000),
        Case(name: "connection reset", faults: [(.reset(afterBytes: 200_000), 2)], expected: .cached),
        Case(name: "closed without response", faults: [(.closeWithoutResponse, 1)], expected: .cached),
        Case(name: "malformed response", faults: [(.malformedResponse, nil)], expected: .stopped(.idle, .networkError)),
        Case(name: "1 KB/s trickle", faults: [(.trickle(bytesPerSecond: 1024), nil)], expected: .cached, size: 1024),
        Case(name: "404", faults: [(.status(404), nil)], expected: .stopped(.failed, .httpError)),
        Case(name: "500", faults: [(.status(500), nil)], expected: .stopped(.failed, .httpError)),
        // Busy: not the item's fault, asked again later (the scheduler waits its Retry-After)
        Case(name: "503", faults: [(.status(503), nil)], expected: .stopped(.idle, .httpError)),
        Case(name: "503 with Retry-After", faults: [(.busy(retryAfter: 30), nil)], expected: .stopped(.idle, .httpError)),
    ]

    @Test(arguments: cases)
    func fault(_ testCase: Case) throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        // Given an item whose origin misbehaves
        let item = try fixture.addItem("m.mp4", size: testCase.size, seed: 42)
        for (fault, times) in testCase.faults { fixture.origin.setFault("/m.mp4", fault, times: times) }
        // When it is downloaded
        let result = fixture.download(item)
        // Then the outcome is the expected one …
        let stored = try #require(try fixture.store.item(id: item.id))
        switch testCase.expected {
        case .cached:
            #expect(result.state == .cached, "\(result); requests: \(fixture.origin.requests)")
            #expect(stored.state == .cached)
            #expect(stored.bytesPresent == testCase.size)
        case .stopped(let state, let code):
            #expect(result.state == state, "\(result)")
            #expect(result.error == code, "\(result)")
            #expect(stored.state == state)
            #expect(stored.error == code)
        }
        if ProcessInfo.processInfo.environment["FAULT_LOG"] != nil {
            print("\(testCase.name): \(result) \(fixture.origin.requests(for: "/m.mp4").map { "\($0.status) \($0.header("range") ?? "-") \($0.header("if-range") ?? "-")" })")
        }
        // … and never a claimed byte that differs from the origin's
        #expect(try fixture.committedBytesMatch(item, size: testCase.size, seed: 42))
        if stored.state == .cached {
            #expect(try fixture.cachedBytes(item, 0..<testCase.size) == GeneratedBytes(size: testCase.size, seed: 42).bytes())
        }
    }

    /// HARDENING 14: the origin's file changes (same size, new ETag) between two transfers;
    /// the result is all new bytes, never a mix.
    @Test func contentChangedBetweenTransfers() throws {
        let fixture = try TransferFixture()
        defer { fixture.close() }
        let size: Int64 = 1 << 20
        let item = try fixture.addItem("m.mp4", size: size, seed: 1, withChecksum: false)
        fixture.origin.setFault("/m.mp4", .truncate(afterBytes: 600_000), times: 1)
        let first = Downloader(store: fixture.store, fetcher: fixture.fetcher, hls: HLSStreams(store: fixture.store), attemptsPerDownload: 1).download(itemID: item.id)
        #expect(first.state == .idle)
        #expect(try fixture.store.bytesPresent(itemID: item.id, file: "media") > 0)
        #expect(try fixture.store.item(id: item.id)?.mediaChangedAt == nil)
        // When the origin's content changes
        fixture.origin.changeContent("/m.mp4", Resource(.generated(size: size, seed: 2), etag: "\"v2\""))
        let second = fixture.download(item)
        // Then the file is entirely the new version
        #expect(second.state == .cached, "\(second)")
        #expect(try fixture.cachedBytes(item, 0..<size) == GeneratedBytes(size: size, seed: 2).bytes())
        let statuses = fixture.origin.requests(for: "/m.mp4").map(\.status)
        #expect(statuses.last == 200)
        // And its time moved, so that a backup copies it again at the same size
        #expect(try fixture.store.item(id: item.id)?.mediaChangedAt != nil)
    }
}
