import Foundation
import OfflineHTTP
import OfflineStore
import Synchronization

/// The transfer side of `CachedFile`: building range requests, judging response heads,
/// taking bodies (to the writer, CachedFile+Writes), and what a finished transfer means for
/// the waiters. Every callback here
/// runs on the transfer loop's thread.
extension CachedFile {
    /// Carries out what `CachedFileState.plan` decided: starts the new fetches' transfers,
    /// resumes the paused ones it allowed further, and ends the ones nobody wants more of.
    func apply(_ changes: FetchChanges) {
        startFetches(changes.created)
        changes.resumed.forEach(loop.resume)
        changes.retired.forEach(loop.cancel)
    }

    /// Starts the HTTP transfers for fetches `plan` created.
    private func startFetches(_ ids: [Int]) {
        for id in ids {
            // The handle is the fetch's before its transfer starts: its callbacks may pause it
            // (and `plan` resume it) before `start` returns.
            let handle = loop.makeHandle()
            guard let request = state.withLock({ s -> HTTPRequest? in
                guard let fetch = s.fetches[id] else { return nil }
                s.fetches[id]?.handle = handle
                handle.isWaitedFor = fetch.forReader
                return makeRequest(fetch, validator: s.validator)
            }) else {
                continue
            }
            loop.start(request, TransferCallbacks(
                head: { [self] status, headers in head(id, status: status, headers: headers) },
                body: { [self] bytes in receive(id, bytes) },
                complete: { [self] error in complete(id, error) }), as: handle)
            let cancelNow = state.withLock { s -> Bool in
                guard let fetch = s.fetches[id] else { return false }
                return fetch.failure != nil || fetch.reachedStop
            }
            if cancelNow { loop.cancel(handle) }
        }
    }

    private func makeRequest(_ fetch: Fetch, validator: CacheValidator?) -> HTTPRequest {
        let rangeValue = fetch.askedEnd == .max ? "bytes=\(fetch.start)-" : "bytes=\(fetch.start)-\(fetch.askedEnd - 1)"
        var request = HTTPRequest(url: origin.url, headers: [("Range", rangeValue)], timeouts: settings.timeouts,
                                  acceptCompressed: false, destinationPolicy: origin.destinationPolicy)
        // A bounded request (a first window, a random read) is waited for from its first
        // bytes: with a 512 KiB buffer one `recv` takes all that has arrived before any of it
        // goes on, and the reader's first 64 KiB wait for the rest.
        if fetch.askedEnd != .max && fetch.askedEnd - fetch.start <= Int64(HTTPRequest.largeReceiveBuffer) * 2 {
            request.receiveBufferBytes = HTTPRequest.smallReceiveBuffer
        }
        // If-Range only with a strong validator: a weak ETag may match different bytes.
        if let etag = validator?.etag, !etag.hasPrefix("W/") {
            request.ifRange = etag
        } else if validator?.etag == nil, let date = validator?.lastModified {
            request.ifRange = date
        }
        return request
    }

    // MARK: - Head

    private enum HeadDecision {
        case accept
        case refuse
        case newVersion(CacheValidator)
    }

    func head(_ id: Int, status: Int, headers: HTTPHeaders) -> Bool {
        switch judgeHead(id, status: status, headers: headers) {
        case .accept: return true
        case .refuse: return false
        case .newVersion(let validator):
            guard startNewVersion(for: id, validator: validator) else { return false }
            // The held validator is now the response's: judged again, it is the same version.
            if case .accept = judgeHead(id, status: status, headers: headers) { return true }
            return false
        }
    }

    private func judgeHead(_ id: Int, status: Int, headers: HTTPHeaders) -> HeadDecision {
        state.withLock { s in
            guard var fetch = s.fetches[id], s.isLive(fetch) else { return .refuse }
            defer { s.fetches[id] = fetch }
            if status >= 400 && status != 416 {
                var failure = FetchError(.originError, "\(origin.url): HTTP \(status)", reason: .httpStatus(status))
                if status == 429 || status == 503 {
                    // Seconds (capped at an hour); a date or nothing: the scheduler's own back-off.
                    failure.retryAfter = min(headers["retry-after"].flatMap { Double($0.trimmingCharacters(in: .whitespaces)) } ?? 0, 3600)
                    failure.message += " (busy\(failure.retryAfter! > 0 ? ", retry after \(Int(failure.retryAfter!)) s" : ""))"
                }
                fetch.failure = failure
                return .refuse
            }
            let seen = CacheValidator(etag: headers["etag"], lastModified: headers["last-modified"])
            let changed = s.validator.map { !Self.sameVersion($0, seen) } ?? false
            let asked = ByteRange(fetch.start, fetch.askedEnd)
            let expected = changed ? nil : (s.validator?.totalSize ?? s.total)
            switch RangeResponseCheck.judge(asked: asked, expectedTotal: expected, status: status, headers: headers) {
            case .failure(let violation):
                fetch.failure = FetchError(.originError, "\(origin.url): \(violation)", reason: .network)
                return .refuse
            case .success(.partial(let range, let total)):
                if changed { return .newVersion(CacheValidator(etag: seen.etag, lastModified: seen.lastModified, totalSize: total)) }
                adopt(&s, seen, total: total)
                fetch.stop = min(fetch.stop, range.end)
                fetch.cursor = range.start
            case .success(.wholeFile(let total)):
                // The origin ignored the range (or If-Range did not match): the body is the
                // whole file from byte 0. Same version: rewrite from 0; else start over.
                if changed { return .newVersion(CacheValidator(etag: seen.etag, lastModified: seen.lastModified, totalSize: total)) }
                adopt(&s, seen, total: total)
                fetch.cursor = 0
                fetch.stop = total ?? .max
            case .success(.unsatisfiable(let total)):
                guard let total, fetch.start >= total else {
                    fetch.failure = FetchError(.originError, "\(origin.url): 416 for bytes \(fetch.start)- of a longer file",
                                               reason: .network)
                    return .refuse
                }
                if let known = s.total, known != total { return .newVersion(CacheValidator(totalSize: total)) }
                adopt(&s, seen, total: total)
                fetch.reachedStop = true  // nothing to fetch past the end
                fetch.validated = true
                return .refuse
            }
            fetch.validated = true
            return .accept
        }
    }

    /// Records the version and size the first response reveals.
    private func adopt(_ s: inout CachedFileState, _ seen: CacheValidator, total: Int64?) {
        if s.validator == nil {
            s.validator = CacheValidator(etag: seen.etag, lastModified: seen.lastModified, totalSize: total ?? s.total)
        }
        if let total { s.learnTotal(total) }
    }

    /// Two validators name the same version unless they disagree on what both carry.
    static func sameVersion(_ held: CacheValidator, _ seen: CacheValidator) -> Bool {
        if let a = held.etag, let b = seen.etag { return a == b }
        if let a = held.lastModified, let b = seen.lastModified { return a == b }
        return true
    }

    /// The origin's file changed: forget the old bytes in the store (before any new byte is
    /// written) and let fetch `id`, whose response is the new version, carry on.
    private func startNewVersion(for id: Int, validator: CacheValidator) -> Bool {
        commitLock.withLock { _ in
            let others: [TransferHandle]? = state.withLock { s in
                guard var fetch = s.fetches[id], s.isLive(fetch) else { return nil }
                s.restarts += 1
                if s.restarts > settings.maxRestarts {
                    fetch.failure = FetchError(.originError, "\(origin.url): the file kept changing while it was fetched",
                                               reason: .contentChanged)
                    s.fetches[id] = fetch
                    return nil
                }
                s.startNewGeneration(validator: validator)
                fetch.generation = s.generation
                s.fetches[id] = fetch
                return s.fetches.filter { $0.key != id }.compactMap(\.value.handle)
            }
            guard let others else { return false }
            do {
                try index.reset(itemID: itemID, file: key, validator: validator)
                try file.truncate(to: 0)
            } catch {
                let failure = Self.writeFailure(error, path: file.path)
                state.withLock { $0.fetches[id]?.failure = failure }
                return false
            }
            others.forEach(loop.cancel)
            return true
        }
    }

    // MARK: - Body

    func receive(_ id: Int, _ bytes: UnsafeRawBufferPointer) -> BodyReply {
        let target = state.withLock { s -> (offset: Int64, count: Int, generation: Int)? in
            guard let fetch = s.fetches[id], s.isLive(fetch), fetch.validated else { return nil }
            let room = max(0, min(s.limit(fetch), fetch.allowance) - fetch.cursor)
            return (fetch.cursor, Int(min(Int64(bytes.count), room)), s.generation)
        }
        guard let target else { return .stop }
        let staged: Int
        do {
            staged = try stage(id, UnsafeRawBufferPointer(rebasing: bytes[0..<target.count]), at: target.offset,
                               generation: target.generation)
        } catch {
            failWrites(Self.writeFailure(error, path: file.path))
            return .stop
        }
        // Readers that take bytes from memory and now have all of theirs are answered from the
        // blocks. Bytes gathered in a block reach the file when it fills or its fetch ends;
        // sooner when another waiter needs them there (a slow origin) or a flush comes.
        struct Outcome {
            var reply: BodyReply = .stop
            var answered: [(waiter: Waiter, bytes: BytesInMemory)] = []
            var spill: StagingBlock?
            var flushAfter: Duration?
            /// It paused (this many times now), or was allowed further while it decided to.
            var pausedAs: Int?
            var resumeAt: TransferHandle?
        }
        let outcome = state.withLock { s -> Outcome in
            guard s.generation == target.generation, var fetch = s.fetches[id], fetch.failure == nil else { return Outcome() }
            var outcome = Outcome(reply: .more)
            fetch.cursor = target.offset + Int64(staged)
            if fetch.firstByteAt == nil { fetch.firstByteAt = .now }
            s.received += Int64(staged)
            if fetch.cursor >= s.limit(fetch) { fetch.reachedStop = true }
            if staged < bytes.count {
                if fetch.reachedStop {
                    // More bytes than wanted: this fetch is done (a later fetch has the rest).
                    outcome.reply = .stop
                } else if staged < target.count {
                    // No staging block free: the rest waits in the connection until one of this
                    // file's blocks is written (`writeOut`), or at once if that happened already.
                    fetch.paused = true
                    fetch.waitsForBlock = true
                    outcome.reply = .pause(taken: staged)
                    if !s.isWritingBlocks {
                        fetch.paused = false
                        fetch.waitsForBlock = false
                        outcome.resumeAt = fetch.handle
                    }
                } else {
                    // As far ahead as its readers want: the rest waits in the connection.
                    fetch.paused = true
                    fetch.pauses += 1
                    outcome.pausedAs = fetch.pauses
                    outcome.reply = .pause(taken: staged)
                    if fetch.allowance > fetch.cursor {
                        // Allowed further while this piece was staged: on at once.
                        fetch.paused = false
                        outcome.resumeAt = fetch.handle
                    }
                }
            }
            outcome.answered = s.takeWaitersInMemory()
            if s.stopsWhenUnwanted, s.waiters.isEmpty, !fetch.reachedStop {
                // The last reader closed and its last wait is over: no more of this response.
                fetch.failure = Self.unwanted(origin)
                outcome.reply = .stop
            }
            s.fetches[id] = fetch
            if let block = fetch.block, !block.isWhollyWritten {
                if fetch.reachedStop || s.waiters.values.contains(where: { s.completes($0.range, block) }) {
                    outcome.spill = block
                } else if !s.flushScheduled {
                    // The flush writes out what gathered by then (`flush(_:)`).
                    s.flushScheduled = true
                    outcome.flushAfter = settings.flushInterval
                }
            }
            return outcome
        }
        for (waiter, bytes) in outcome.answered { waiter.bytes?(bytes) }
        if let flushAfter = outcome.flushAfter { flusher.schedule(self, after: flushAfter) }
        if let handle = outcome.resumeAt { loop.resume(handle) }
        if let pause = outcome.pausedAs, outcome.resumeAt == nil {
            // Weak: a timer must not keep a file nobody uses (and its descriptors) for its span.
            callbacks.asyncAfter(deadline: .now() + Self.dispatchInterval(settings.pausedFetchLimit)) { [weak self] in
                self?.retireIfStillPaused(id, pause: pause)
            }
        }
        if let spill = outcome.spill, !writeOut(spill) { return .stop }
        return outcome.reply
    }

    /// Ends fetch `id` if it is still in the pause it made for the `pause`th time: its reader
    /// stopped or went elsewhere.
    private func retireIfStillPaused(_ id: Int, pause: Int) {
        var changes = FetchChanges()
        state.withLock { s in
            // (A pause for a staging block is not its reader's: it ends with a block write.)
            guard let fetch = s.fetches[id], fetch.paused, fetch.pauses == pause, !fetch.waitsForBlock else { return }
            s.retire(id, &changes)
        }
        apply(changes)
    }

    static func dispatchInterval(_ duration: Duration) -> DispatchTimeInterval {
        let (seconds, attoseconds) = duration.components
        return .nanoseconds(Int(max(0, seconds * 1_000_000_000 + attoseconds / 1_000_000_000)))
    }

    // MARK: - Completion

    func complete(_ id: Int, _ error: HTTPError?) {
        // Bytes that arrived are good whatever ended the transfer: into the file with them.
        if let block = state.withLock({ s in s.fetches[id]?.block }) { writeOut(block) }
        var failed: [(Waiter, FetchError)] = []
        var ready: [Waiter] = []
        var changes = FetchChanges()
        state.withLock { s in
            guard let fetch = s.fetches.removeValue(forKey: id) else { return }
            if fetch.generation == s.generation {
                var failure: FetchError?
                /// The connection ended before the fetch's stop.
                var cutShort = false
                if fetch.reachedStop {
                    failure = nil
                } else if let reason = fetch.failure {
                    failure = reason
                } else if let error {
                    failure = Self.fetchError(error)
                    cutShort = error.code != .cancelled
                } else if !fetch.validated {
                    failure = FetchError(.originError, "\(origin.url): no usable response", reason: .network)
                } else if s.limit(fetch) == .max {
                    s.learnTotal(fetch.cursor)  // a body of unknown length ended: that is the size
                } else if fetch.cursor < s.limit(fetch) {
                    failure = FetchError(.unavailable, "\(origin.url): body ended at byte \(fetch.cursor), expected \(s.limit(fetch))",
                                         reason: .network)
                    cutShort = true
                }
                // A fetch that paused for its reader (or was held for another's) left its
                // connection idle, which origins close after a while: the bytes still wanted get
                // a new fetch (`plan`, below), which fails its waiters if the origin is really gone.
                if cutShort && (fetch.pauses > 0 || fetch.handle?.wasHeld == true) { failure = nil }
                // A fetch stopped here (no reader wanted it, or `cancelAll`, which told its
                // waiters then) owes nothing to the waiters that came after the stop: they
                // get a fetch of their own (`plan`, below).
                let stoppedHere = fetch.failure?.code == .cancelled
                if let failure, !stoppedHere {
                    let lost = fetch.cursor..<max(fetch.cursor, s.limit(fetch))
                    for (waiterID, waiter) in s.waiters where !s.isSatisfied(waiter.range) && s.clamped(waiter.range).overlaps(lost) {
                        s.waiters[waiterID] = nil
                        failed.append((waiter, failure))
                    }
                } else if failure == nil {
                    s.restarts = 0
                }
            }
            ready = s.takeSatisfiedWaiters()
            changes = s.plan(settings)
            // Its last reader closed before this fetch ended: nobody reads its blocks now.
            if s.stopsWhenUnwanted { s.recent.removeAll(where: s.isSettled) }
        }
        apply(changes)
        for waiter in ready { waiter.completion(.success(())) }
        for (waiter, failure) in failed { waiter.completion(.failure(failure)) }
    }

    static func fetchError(_ error: HTTPError) -> FetchError {
        switch error.code {
        case .couldNotConnect: FetchError(.unavailable, error.message, reason: .noNetwork)
        case .timeout: FetchError(.unavailable, error.message, reason: .timeout)
        case .network: FetchError(.unavailable, error.message, reason: .network)
        case .cancelled: FetchError(.cancelled, error.message)
        // Asking again cannot help: the URL (or where it redirects) is one offlinefs refuses.
        case .forbiddenDestination, .badURL, .unsupportedURL, .insecureRedirect, .tooManyRedirects:
            FetchError(.originError, error.message, reason: .refused)
        default: FetchError(.originError, error.message, reason: .network)
        }
    }
}
