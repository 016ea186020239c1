import Logging
import OfflineEngine
@testable import OfflineMount
import OfflineFUSE
import OfflineTestSupport
import Synchronization
import Testing

/// Errors become kernel answers in one place, and a flood of them is logged once.
@Suite struct ErrnoTableTests {
    @Test func runningOutOfDescriptorsIsEIOAndLoggedOnceWithTheLimit() {
        let lines = LogLines()
        let table = ErrnoTable(logger: Logger(label: "test") { _ in lines })
        let shortage = FetchError(.cacheWriteFailed, "cannot open /cache/1/media: Too many open files", reason: .outOfDescriptors)
        #expect(table.errno(for: shortage) == .ioError)
        #expect(table.errno(for: FetchError(.cacheWriteFailed, "cannot open /cache/2/media: Too many open files",
                                            reason: .outOfDescriptors)) == .ioError)
        #expect(lines.messages.count == 1)
        #expect(lines.messages.first?.contains("open-file limit") == true)
        #expect(lines.messages.first?.hasSuffix("/cache/1/media: Too many open files") == true)
        // An interrupted read is EINTR, and says nothing.
        #expect(table.errno(for: FetchError(.cancelled, "interrupted")) == .interrupted)
        #expect(lines.messages.count == 1)
    }
}
