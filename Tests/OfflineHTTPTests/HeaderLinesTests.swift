@testable import OfflineHTTP
import Testing

/// libcurl's header callback gets one line at a time, except after a pause: libcurl 7.88 then
/// hands over every line it held in one call (seen with a download held back for a reader
/// from its first byte, whose `206` then looked to have no `Content-Range`).
@Suite struct HeaderLinesTests {
    @Test func headerLinesHandedOverTogetherAreReadOneByOne() {
        let held = "Date: Mon, 30 Nov 2026 00:47:54 GMT\r\nETag: \"g-1\"\r\nContent-Range: bytes 600000-4194303/4194304\r\n"
            + "Content-Length: 3594304\r\n\r\n"
        let lines = Array(held.utf8).withUnsafeBytes { HTTPHeaders.lines(in: $0) }
        #expect(lines.count == 5)
        var headers = HTTPHeaders()
        for line in lines { headers.addLine(line) }
        #expect(headers["content-range"] == "bytes 600000-4194303/4194304")
        #expect(headers["etag"] == "\"g-1\"" && headers["content-length"] == "3594304")
        // One line, as libcurl usually gives it, is that line
        let one = Array("Accept-Ranges: bytes\r\n".utf8).withUnsafeBytes { HTTPHeaders.lines(in: $0) }
        #expect(one == ["Accept-Ranges: bytes\r\n"])
    }
}
