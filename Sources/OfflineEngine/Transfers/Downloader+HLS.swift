import Dispatch
import Foundation
import OfflineHTTP
import OfflineStore
import Synchronization

/// HLS downloads (DESIGN §3): the rendition is chosen and its media playlist stored, then the
/// keys, the init segment and the segments are fetched through the same range fetcher as any
/// item file — several in flight, each into the cache file of its URL, so a crash resumes
/// where the range map says and the origin's bytes (still encrypted) are what is kept.
///
/// A segment that cannot be fetched fails the download: none is ever skipped.
extension Downloader {
    /// Segments (and init segments, keys) in flight at once.
    public static let hlsSegmentsInFlight = 4

    func downloadHLS(_ item: Item, recordingFailures record: Bool) throws -> DownloadResult {
        let policies = try store.policies()
        if let chosen = hls.stream(itemID: item.id), !chosen.record.isChoice(quality: item.quality, audio: item.audioLanguages) {
            // Another quality or audio was asked: the old rendition's files go before the new
            // ones come (their cache keys follow the renditions' order).
            discardHLSFiles(chosen)
            hls.forget(itemID: item.id)
        }
        let stream: HLSStream
        do {
            stream = try hls.resolve(itemID: item.id, quality: item.quality, audio: item.audioLanguages,
                                     maxBytes: policies.fileSizeMax.bytes)
        } catch {
            return try finish(item, error.isTransient ? .idle : .failed, error.code, error.message, record: record)
        }
        if let estimate = stream.record.estimatedSize, item.size != estimate, item.state != .cached {
            try store.setSize(itemID: item.id, estimate)
        }
        if let max = policies.fileSizeMax.bytes, let estimate = stream.record.estimatedSize, estimate > max,
           item.partialSeconds == nil {
            return try finish(item, .idle, .outOfPolicy,
                              "even the lowest variant (about \(estimate) bytes) exceeds file-size-max \(policies.fileSizeMax)",
                              record: record)
        }
        try store.setState(itemID: item.id, state: .downloading)

        let segments = stream.tracks.indices.map { stream.segmentIndices(track: $0, partialSeconds: item.partialSeconds) }
        var wanted = stream.parts.filter { part in
            switch part.kind {
            case .key, .initSegment: true
            case .segment(let track, let index): segments[track].contains(index)
            case .playlist: false  // made from the stream, nothing to fetch
            }
        }
        let licence = try store.licence(itemID: item.id)
        if licence?.key != nil { wanted.removeAll { $0.kind == .key } }  // the licence server gave the key
        if let refused = Self.refusedPart(wanted, of: stream, policy: hls.destinationPolicy(item)) {
            return try finish(item, .failed, .downloadFailed, refused, record: record)
        }

        var lastFailure = HLSFailure(.noNetwork, "not attempted")
        var fetched = false
        for _ in 0..<attemptsPerDownload {
            if let failure = fetchParts(wanted, itemID: item.id) {
                lastFailure = failure
                _ = fetcher.flush(itemID: item.id, files: Array(Set(wanted.map(\.resource))))
                if !failure.isTransient { break }
            } else {
                fetched = true
                break
            }
        }
        guard fetched else {
            return try finish(item, lastFailure.isTransient ? .idle : .failed, lastFailure.code, lastFailure.message, record: record)
        }
        if let licence, licence.key == nil, let keyPart = stream.parts.first(where: { $0.kind == .key }) {
            // Keys live with the licence: served only while it is valid, renewed with it.
            let path = fetcher.cacheFilePath(itemID: item.id, file: keyPart.resource)
            guard let key = FileManager.default.contents(atPath: path), key.count == 16 else {
                return try finish(item, .failed, .corrupted, "the AES-128 key at \(stream.resourceURLs[keyPart.resource]?.absoluteString ?? "?") is not 16 bytes", record: record)
            }
            try store.setLicenceKey(itemID: item.id, key)
        }
        let partial = segments.map(\.count).reduce(0, +) < stream.segmentCount
        return try completeHLS(item, stream: stream, parts: wanted, partial: partial, record: record)
    }

    /// Flushes what arrived, checks every asked part is durable, and records the outcome.
    private func completeHLS(_ item: Item, stream: HLSStream, parts: [HLSPart], partial: Bool,
                             record: Bool) throws -> DownloadResult {
        var sizes: [CacheFileKey: Int64] = [:]
        for (resource, result) in fetcher.flush(itemID: item.id, files: Array(Set(parts.map(\.resource)))) {
            switch result {
            case .success(let size): sizes[resource] = size
            case .failure(let error):
                return try finish(item, error.isTransient ? .idle : .failed, error.itemErrorCode, error.message, record: record)
            }
        }
        var total: Int64 = 0
        for part in parts where part.kind != .key {
            if let range = part.range {
                guard fetcher.isAvailable(itemID: item.id, file: part.resource, range: ByteRange(range.lowerBound, range.upperBound)) else {
                    return try finish(item, .idle, .networkError, "\(part.name) is incomplete after its transfer ended", record: record)
                }
                total += Int64(range.count)
            } else {
                guard let size = sizes[part.resource] ?? nil else {
                    return try finish(item, .idle, .networkError, "\(part.name) is incomplete after its transfer ended", record: record)
                }
                total += size
            }
        }
        let segmentCount = parts.filter(\.isSegment).count
        if !partial {
            // Every byte is here: the exact size replaces the estimate.
            try store.setSize(itemID: item.id, total)
            try store.setDownloaded(itemID: item.id, at: store.clock())
            return try finish(item, .cached, nil, "\(segmentCount) segments, \(total) bytes")
        }
        return try finish(item, .partiallyCached, nil,
                          "first \(segmentCount) of \(stream.segmentCount) segments (partial=\(item.partialSeconds ?? 0) s), \(total) bytes")
    }

    /// Fetches `parts` with a few in flight; the first failure stops the rest.
    private func fetchParts(_ parts: [HLSPart], itemID: Int64) -> HLSFailure? {
        let slots = DispatchSemaphore(value: Self.hlsSegmentsInFlight)
        let group = DispatchGroup()
        let failure = Mutex<HLSFailure?>(nil)
        for part in parts {
            slots.wait()
            if stopRequests.withLock({ $0.contains(itemID) }) {
                failure.withLock { $0 = $0 ?? HLSFailure(.cancelled, "stopped") }
            }
            if failure.withLock({ $0 != nil }) {
                slots.signal()
                break
            }
            let range = part.range.map { ByteRange($0.lowerBound, $0.upperBound) } ?? ByteRange(0, .max)
            group.enter()
            fetcher.whenAvailable(itemID: itemID, file: part.resource, range: range, readAhead: 0,
                                  deadline: .now + .seconds(365 * 86_400), forDownload: true) { [fetcher] result in
                if case .failure(let error) = result {
                    let failed = HLSFailure(error, context: Self.describe(part))
                    let first = failure.withLock { current -> Bool in
                        let isFirst = current == nil
                        // A part stopped because another failed (in this attempt or, its
                        // transfer not yet ended, the one before) is not the cause: the other
                        // part's error replaces it.
                        if isFirst || (current?.code == .cancelled && failed.code != .cancelled) { current = failed }
                        return isFirst
                    }
                    // One missing segment fails the item: the others in flight stop.
                    if first { fetcher.cancel(itemID: itemID) }
                }
                slots.signal()
                group.leave()
            }
        }
        group.wait()
        if stopRequests.withLock({ $0.contains(itemID) }) { return HLSFailure(.cancelled, "stopped") }
        let result = failure.withLock { $0 }
        if let result, result.code == .cancelled {
            // Nobody asked to stop: the transfers were cut under the download (a stale
            // cancellation, an evict). Another attempt, or a later one, may complete it.
            return HLSFailure(.networkError, "\(result.message) (interrupted)")
        }
        return result
    }

    /// Why a part may not be fetched: its URL names a loopback, link-local or private host
    /// while the source's feed is public (HARDENING: a public feed must not point downloads
    /// at this machine or the LAN). The transfer would refuse the connection too, but as a
    /// network error that is retried; this is a permanent failure that fetches nothing.
    static func refusedPart(_ parts: [HLSPart], of stream: HLSStream, policy: DestinationPolicy) -> String? {
        guard policy == .publicOnly else { return nil }
        for part in parts {
            guard let url = stream.resourceURLs[part.resource] else { continue }
            if DestinationPolicy.forFeed(host: url.host ?? "") == .any {
                return "\(describe(part)) \(url.absoluteString): refused: a non-public address, and the source's feed is public"
            }
        }
        return nil
    }

    private static func describe(_ part: HLSPart) -> String {
        switch part.kind {
        case .segment(_, let index): "segment \(index) (\(part.name))"
        case .initSegment: "init segment (\(part.name))"
        case .key: "key (\(part.name))"
        case .playlist: "playlist \(part.name)"
        }
    }

    /// Drops every cache file of a rendition (store first, then disk).
    func discardHLSFiles(_ stream: HLSStream) {
        for resource in stream.resourceURLs.keys { try? fetcher.discard(itemID: stream.itemID, file: resource) }
    }
}
