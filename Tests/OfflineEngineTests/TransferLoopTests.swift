import Foundation
import OfflineHTTP
import OfflineTestSupport
import Testing

/// The generic streaming loop under the range fetcher.
@Suite struct TransferLoopTests {
    @Test func manyTransfersCountersAndCancel() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let loop = TransferLoop()
        defer { loop.shutdown() }
        origin.serve("/big", .generated(size: 8 << 20, seed: 1))
        origin.serve("/small", .generated(size: 300_000, seed: 2))
        origin.setFault("/big", .stallBeforeHeaders(seconds: 30))
        let done = DispatchGroup()
        let errors = Box<[HTTPError?]>([])
        let bodies = Box<Int>(0)
        func callbacks() -> TransferCallbacks {
            done.enter()
            return TransferCallbacks(body: { bytes in bodies.value += bytes.count; return true },
                                     complete: { error in errors.value.append(error); done.leave() })
        }
        // Given six small transfers and one that stalls
        var handles: [TransferHandle] = []
        for _ in 0..<6 { handles.append(loop.start(HTTPRequest(url: origin.url("/small")), callbacks())) }
        let stalled = loop.start(HTTPRequest(url: origin.url("/big")), callbacks())
        while origin.requests(for: "/big").isEmpty { usleep(1000) }
        // When the stalled one is cancelled
        loop.cancel(stalled)
        // Then every transfer completes once: six fine, one cancelled
        #expect(done.wait(timeout: .now() + 5) == .success)
        #expect(errors.value.count == 7)
        #expect(errors.value.compactMap { $0?.code } == [.cancelled])
        #expect(handles.allSatisfy { $0.bytesReceived == 300_000 && $0.bytesExpected == 300_000 })
        #expect(bodies.value == 6 * 300_000)
        origin.releaseStalls()
    }

    @Test func refusedHeadStopsTheBody() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let loop = TransferLoop()
        defer { loop.shutdown() }
        origin.serve("/x", .generated(size: 4 << 20, seed: 1))
        let done = DispatchSemaphore(value: 0)
        let outcome = Box<(HTTPError?, Int)>((nil, 0))
        loop.start(HTTPRequest(url: origin.url("/x")), TransferCallbacks(
            head: { status, _ in status == 206 },  // a 200 is refused
            body: { bytes in outcome.value.1 += bytes.count; return true },
            complete: { error in outcome.value.0 = error; done.signal() }))
        #expect(done.wait(timeout: .now() + 5) == .success)
        #expect(outcome.value.0?.code == .cancelled)
        #expect(outcome.value.1 == 0)
    }

    @Test func startAfterShutdownCompletesCancelled() throws {
        let loop = TransferLoop()
        loop.shutdown()
        let error = Box<HTTPError?>(nil)
        loop.start(HTTPRequest(url: "http://127.0.0.1:9/"), TransferCallbacks(body: { _ in true }, complete: { error.value = $0 }))
        #expect(error.value?.code == .cancelled)
    }
}
