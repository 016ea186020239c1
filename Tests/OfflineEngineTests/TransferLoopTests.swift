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
            return TransferCallbacks(body: { bytes in bodies.value += bytes.count; return .more },
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
            body: { bytes in outcome.value.1 += bytes.count; return .more },
            complete: { error in outcome.value.0 = error; done.signal() }))
        #expect(done.wait(timeout: .now() + 5) == .success)
        #expect(outcome.value.0?.code == .cancelled)
        #expect(outcome.value.1 == 0)
    }

    @Test func startAfterShutdownCompletesCancelled() throws {
        let loop = TransferLoop()
        loop.shutdown()
        let error = Box<HTTPError?>(nil)
        loop.start(HTTPRequest(url: "http://127.0.0.1:9/"), TransferCallbacks(body: { _ in .more }, complete: { error.value = $0 }))
        #expect(error.value?.code == .cancelled)
    }

    @Test func aConsumerThatPausesAtEveryMiBGetsEveryByteInOrderOverOneRequest() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let loop = TransferLoop()
        defer { loop.shutdown() }
        let size = 8 << 20
        origin.serve("/p", .generated(size: Int64(size), seed: 3))
        let received = Box<Data>(Data())
        let paused = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let outcome = Box<(error: HTTPError?, bytesAtEnd: Int)?>(nil)
        // Given a consumer that takes bytes up to the next MiB boundary, then pauses
        let handle = loop.start(HTTPRequest(url: origin.url("/p")), TransferCallbacks(
            body: { bytes in
                let boundary = (received.value.count / (1 << 20) + 1) << 20
                let taken = min(bytes.count, boundary - received.value.count)
                received.value.append(contentsOf: bytes[0..<taken])
                guard received.value.count == boundary, received.value.count < size else { return .more }
                paused.signal()
                return .pause(taken: taken)
            },
            complete: { error in
                outcome.value = (error, received.value.count)
                done.signal()
            }))
        // When it is resumed after each pause
        for pause in 1..<8 {
            #expect(paused.wait(timeout: .now() + 5) == .success)
            // (nothing arrives while it is paused)
            #expect(received.value.count == pause << 20)
            loop.resume(handle)
        }
        // Then every byte came, in order, and the end after the last of them
        #expect(done.wait(timeout: .now() + 5) == .success)
        #expect(outcome.value?.error == nil)
        #expect(outcome.value?.bytesAtEnd == size)
        #expect(received.value == GeneratedBytes(size: Int64(size), seed: 3).bytes(in: 0..<Int64(size)))
        #expect(origin.requests(for: "/p").count == 1)
    }

    @Test func theEndOfATransferWaitsForTheBytesKeptWhilePaused() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let loop = TransferLoop()
        defer { loop.shutdown() }
        origin.serve("/s", .generated(size: 20_000, seed: 4))
        let received = Box<Data>(Data())
        let paused = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let bytesAtEnd = Box<Int?>(nil)
        // Given a consumer that pauses after 10,000 bytes of a 20,000-byte body
        let handle = loop.start(HTTPRequest(url: origin.url("/s")), TransferCallbacks(
            body: { bytes in
                let taken = received.value.count < 10_000 ? min(bytes.count, 10_000 - received.value.count) : bytes.count
                received.value.append(contentsOf: bytes[0..<taken])
                guard taken < bytes.count else { return .more }
                paused.signal()
                return .pause(taken: taken)
            },
            complete: { error in
                bytesAtEnd.value = error == nil ? received.value.count : -1
                done.signal()
            }))
        #expect(paused.wait(timeout: .now() + 5) == .success)
        #expect(received.value.count == 10_000)
        // When it resumes
        loop.resume(handle)
        // Then the rest comes before the end
        #expect(done.wait(timeout: .now() + 5) == .success)
        #expect(bytesAtEnd.value == 20_000)
        #expect(received.value == GeneratedBytes(size: 20_000, seed: 4).bytes(in: 0..<20_000))
    }

    @Test func transfersNobodyWaitsForAreHeldWhileOneSomeoneWaitsForReceives() throws {
        let origin = try TestOrigin()
        defer { origin.stop() }
        let loop = TransferLoop()
        defer { loop.shutdown() }
        let size = 8 << 20
        origin.serve("/read", .generated(size: 1 << 20, seed: 5))
        origin.setFault("/read", .stall(seconds: 30))
        origin.serve("/a", .generated(size: Int64(size), seed: 6))
        origin.serve("/b", .generated(size: Int64(size), seed: 7))
        // Given a reader's transfer whose body stalls
        let readerDone = DispatchSemaphore(value: 0)
        loop.start(HTTPRequest(url: origin.url("/read")), TransferCallbacks(body: { _ in .more }, complete: { _ in readerDone.signal() }))
        while origin.requests(for: "/read").isEmpty { usleep(1000) }
        // When two downloads nobody waits for start beside it
        func download(_ path: String) -> (TransferHandle, Box<Data>, DispatchSemaphore) {
            let received = Box<Data>(Data())
            let done = DispatchSemaphore(value: 0)
            let handle = loop.makeHandle()
            handle.isWaitedFor = false
            loop.start(HTTPRequest(url: origin.url(path)), TransferCallbacks(
                body: { bytes in received.value.append(contentsOf: bytes); return .more },
                complete: { error in if error == nil { done.signal() } }), as: handle)
            return (handle, received, done)
        }
        let (a, aBytes, aDone) = download("/a")
        let (b, bBytes, bDone) = download("/b")
        // Then they are held (loopback would carry 8 MiB many times over in a second)
        #expect(aDone.wait(timeout: .now() + 1) == .timedOut)
        #expect(bDone.wait(timeout: .now()) == .timedOut)
        #expect(a.wasHeld && b.wasHeld)
        // and one that someone comes to wait for goes on while the reader still stalls,
        a.isWaitedFor = true
        #expect(aDone.wait(timeout: .now() + 5) == .success)
        #expect(bBytes.value.count < size)
        // and the other once the reader's transfer is over, every byte in order
        origin.releaseStalls()
        #expect(readerDone.wait(timeout: .now() + 5) == .success)
        #expect(bDone.wait(timeout: .now() + 5) == .success)
        #expect(aBytes.value == GeneratedBytes(size: Int64(size), seed: 6).bytes(in: 0..<Int64(size)))
        #expect(bBytes.value == GeneratedBytes(size: Int64(size), seed: 7).bytes(in: 0..<Int64(size)))
        #expect(origin.requests(for: "/b").count == 1)
    }
}
