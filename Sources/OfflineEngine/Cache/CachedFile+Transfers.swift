import Foundation
import OfflineHTTP
import OfflineStore
import Synchronization

/// The transfer side of `CachedFile`: building range requests, judging response heads,
/// writing bodies, and what a finished transfer means for the waiters. Every callback here
/// runs on the transfer loop's thread.
extension CachedFile {
    /// Starts the HTTP transfers for fetches `plan` created.
    func startFetches(_ ids: [Int]) {
        for id in ids {
            guard let request = state.withLock({ s in s.fetches[id].map { makeRequest($0, validator: s.validator) } }) else {
                continue
            }
            let handle = loop.start(request, TransferCallbacks(
                head: { [self] status, headers in head(id, status: status, headers: headers) },
                body: { [self] bytes in receive(id, bytes) },
                complete: { [self] error in complete(id, error) }))
            let cancelNow = state.withLock { s -> Bool in
                guard s.fetches[id] != nil else { return false }
                s.fetches[id]?.handle = handle
                return s.fetches[id]?.failure != nil
            }
            if cancelNow { loop.cancel(handle) }
        }
    }

    private func makeRequest(_ fetch: Fetch, validator: CacheValidator?) -> HTTPRequest {
        let rangeValue = fetch.askedEnd == .max ? "bytes=\(fetch.start)-" : "bytes=\(fetch.start)-\(fetch.askedEnd - 1)"
        var request = HTTPRequest(url: origin.url, headers: [("Range", rangeValue)], timeouts: settings.timeouts,
                                  acceptCompressed: false, destinationPolicy: origin.destinationPolicy)
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
                fetch.failure = FetchError(.originError, "\(origin.url): HTTP \(status)", reason: .httpStatus(status))
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

    func receive(_ id: Int, _ bytes: UnsafeRawBufferPointer) -> Bool {
        let target = state.withLock { s -> (offset: Int64, count: Int, generation: Int, early: [(waiter: Waiter, bytes: EarlyBytes)])? in
            guard let fetch = s.fetches[id], s.isLive(fetch), fetch.validated else { return nil }
            let room = max(0, s.limit(fetch) - fetch.cursor)
            let count = Int(min(Int64(bytes.count), room))
            // Readers that take bytes from memory and now have all of theirs are answered
            // before the write (`CachedFileState.takeWaiters`).
            let arriving = fetch.cursor..<(fetch.cursor + Int64(count))
            let early = count > 0 ? s.takeWaiters(answerableFrom: arriving, bytes: UnsafeRawBufferPointer(rebasing: bytes[0..<count])) : []
            return (fetch.cursor, count, s.generation, early)
        }
        guard let target else { return false }
        for (waiter, early) in target.early {
            switch early {
            case .slice(let slice): waiter.bytes?(UnsafeRawBufferPointer(rebasing: bytes[slice]))
            case .collected(let collected): collected.withUnsafeBytes { waiter.bytes?($0) }
            }
        }
        if target.count > 0 {
            do {
                try file.write(UnsafeRawBufferPointer(rebasing: bytes[0..<target.count]), at: target.offset)
            } catch {
                failWrites(Self.writeFailure(error, path: file.path))
                return false
            }
        }
        var ready: [Waiter] = []
        var flushAfter: Duration?
        let keepGoing = state.withLock { s -> Bool in
            guard s.generation == target.generation, var fetch = s.fetches[id] else { return false }
            let written = target.offset..<(target.offset + Int64(target.count))
            s.present.insert(written)
            s.unflushed.insert(written)
            s.unflushedBytes += Int64(target.count)
            fetch.cursor = written.upperBound
            if fetch.cursor >= s.limit(fetch) { fetch.reachedStop = true }
            s.fetches[id] = fetch
            ready = s.takeSatisfiedWaiters()
            if s.unflushedBytes >= settings.flushBytes && !s.urgentFlushScheduled {
                s.urgentFlushScheduled = true
                s.flushScheduled = true
                flushAfter = .zero
            } else if !s.flushScheduled {
                s.flushScheduled = true
                flushAfter = settings.flushInterval
            }
            // More bytes than wanted: this fetch is done (a later fetch has the rest).
            return target.count == bytes.count
        }
        // Readers first: scheduling a flush may start the flusher's thread.
        for waiter in ready { waiter.completion(.success(())) }
        if let flushAfter { flusher.schedule(self, after: flushAfter) }
        return keepGoing
    }

    // MARK: - Completion

    func complete(_ id: Int, _ error: HTTPError?) {
        var failed: [(Waiter, FetchError)] = []
        var ready: [Waiter] = []
        var starts: [Int] = []
        state.withLock { s in
            guard let fetch = s.fetches.removeValue(forKey: id) else { return }
            if fetch.generation == s.generation {
                var failure: FetchError?
                if fetch.reachedStop {
                    failure = nil
                } else if let reason = fetch.failure {
                    failure = reason
                } else if let error {
                    failure = Self.fetchError(error)
                } else if !fetch.validated {
                    failure = FetchError(.originError, "\(origin.url): no usable response", reason: .network)
                } else if s.limit(fetch) == .max {
                    s.learnTotal(fetch.cursor)  // a body of unknown length ended: that is the size
                } else if fetch.cursor < s.limit(fetch) {
                    failure = FetchError(.unavailable, "\(origin.url): body ended at byte \(fetch.cursor), expected \(s.limit(fetch))",
                                         reason: .network)
                }
                if let failure {
                    let lost = fetch.cursor..<max(fetch.cursor, s.limit(fetch))
                    for (waiterID, waiter) in s.waiters where !s.isSatisfied(waiter.range) && s.clamped(waiter.range).overlaps(lost) {
                        s.waiters[waiterID] = nil
                        failed.append((waiter, failure))
                    }
                } else {
                    s.restarts = 0
                }
            }
            ready = s.takeSatisfiedWaiters()
            starts = s.plan(nearBytes: settings.nearBytes)
        }
        startFetches(starts)
        for waiter in ready { waiter.completion(.success(())) }
        for (waiter, failure) in failed { waiter.completion(.failure(failure)) }
    }

    static func fetchError(_ error: HTTPError) -> FetchError {
        switch error.code {
        case .couldNotConnect: FetchError(.unavailable, error.message, reason: .noNetwork)
        case .timeout: FetchError(.unavailable, error.message, reason: .timeout)
        case .network: FetchError(.unavailable, error.message, reason: .network)
        case .cancelled: FetchError(.cancelled, error.message)
        case .forbiddenDestination, .badURL, .insecureRedirect, .tooManyRedirects:
            FetchError(.originError, error.message, reason: .refused)
        default: FetchError(.originError, error.message, reason: .network)
        }
    }
}
