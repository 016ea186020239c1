import OfflineHTTP
import Testing

@Suite("Range responses are checked before any byte is kept")
struct RangeResponseCheckTests {
    let asked = ByteRange(1000, 2000)

    private func judge(_ status: Int, _ headers: [(String, String)], total: Int64? = 10_000)
        -> Result<RangeResponse, RangeViolation>
    {
        RangeResponseCheck.judge(asked: asked, expectedTotal: total, status: status, headers: HTTPHeaders(headers))
    }

    @Test func exactPartialIsAccepted() {
        let result = judge(206, [("Content-Range", "bytes 1000-1999/10000"), ("Content-Length", "1000")])
        #expect(result == .success(.partial(range: ByteRange(1000, 2000), total: 10_000)))
    }

    @Test func wholeFileInsteadOfRangeIsReportedAsSuch() {
        #expect(judge(200, [("Content-Length", "10000")]) == .success(.wholeFile(total: 10_000)))
    }

    @Test func wholeFileOfAnotherSizeIsRefused() {
        #expect(throws: RangeViolation.self) { try judge(200, [("Content-Length", "9000")]).get() }
    }

    @Test func partialAtWrongOffsetIsRefused() {
        #expect(throws: RangeViolation.self) {
            try judge(206, [("Content-Range", "bytes 0-999/10000")]).get()
        }
    }

    @Test func partialWithChangedTotalIsRefused() {
        #expect(throws: RangeViolation.self) {
            try judge(206, [("Content-Range", "bytes 1000-1999/20000")]).get()
        }
    }

    @Test func partialBeyondAskedEndIsRefused() {
        #expect(throws: RangeViolation.self) {
            try judge(206, [("Content-Range", "bytes 1000-2999/10000")]).get()
        }
    }

    @Test func shortPartialIsAcceptedOnlyAtEndOfFile() {
        let atEnd = RangeResponseCheck.judge(
            asked: ByteRange(9500, 10_500), expectedTotal: nil, status: 206,
            headers: HTTPHeaders([("Content-Range", "bytes 9500-9999/10000")]))
        #expect(atEnd == .success(.partial(range: ByteRange(9500, 10_000), total: 10_000)))
        #expect(throws: RangeViolation.self) {
            try judge(206, [("Content-Range", "bytes 1000-1499/10000")]).get()
        }
    }

    @Test func contentLengthMustMatchTheRange() {
        #expect(throws: RangeViolation.self) {
            try judge(206, [("Content-Range", "bytes 1000-1999/10000"), ("Content-Length", "500")]).get()
        }
    }

    @Test func compressedRangeIsRefused() {
        #expect(throws: RangeViolation.self) {
            try judge(206, [("Content-Range", "bytes 1000-1999/10000"), ("Content-Encoding", "gzip")]).get()
        }
    }

    @Test func unsatisfiableReportsTheServersTotal() {
        #expect(judge(416, [("Content-Range", "bytes */800")]) == .success(.unsatisfiable(total: 800)))
    }

    @Test func garbageContentRangeIsRefused() {
        for value in ["bytes 1000-/10000", "items 1000-1999/10000", "bytes a-b/c", "bytes 1000-1999"] {
            #expect(throws: RangeViolation.self, "\(value)") {
                try judge(206, [("Content-Range", value)]).get()
            }
        }
    }

    @Test func otherStatusesAreRefused() {
        #expect(throws: RangeViolation.self) { try judge(500, []).get() }
    }
}
