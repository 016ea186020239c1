import Dispatch
import OfflineHTTP
import OfflineStore

extension RangeFetcher {
    /// HEAD requests in flight when learning the sizes of a stream's parts.
    static let sizeProbesInFlight = 8

    /// Learns the sizes of `files` whose size is not known yet, one `HEAD` each, at most
    /// `sizeProbesInFlight` at once, and keeps each answer as the version to fetch (size and
    /// validators, in the store): a program listing an HLS item's segments sees their real
    /// sizes before any byte of them is fetched. A later fetch that finds another size starts
    /// a new version as ever. `completion` runs once, on another thread, when every answer is
    /// in or has failed (a failure leaves that size unknown).
    public func learnSizes(itemID: Int64, files keys: [CacheFileKey], completion: @escaping @Sendable () -> Void) {
        let unknown = keys.filter { knownSize(itemID: itemID, file: $0) == nil }
        guard !unknown.isEmpty else { return completion() }
        let probeTimeouts = HTTPTimeouts(connect: settings.timeouts.connect, lowSpeedSeconds: settings.timeouts.lowSpeedSeconds,
                                         total: 30)
        sizeProbes.async { [self] in
            var probed: [(file: CachedFile, request: HTTPRequest)] = []
            for key in unknown {
                guard let file = try? cachedFile(itemID: itemID, key: key) else { continue }
                probed.append((file, HTTPRequest(url: file.origin.url, method: .head, timeouts: probeTimeouts,
                                                 destinationPolicy: file.origin.destinationPolicy)))
            }
            let answers = HTTPClient().performAll(probed.map(\.request), maxParallel: Self.sizeProbesInFlight)
            for ((file, _), answer) in zip(probed, answers) {
                guard case .success(let response) = answer, response.isSuccess,
                      let length = response.contentLength, length > 0 else { continue }
                file.adopt(CacheValidator(etag: response.etag, lastModified: response.lastModified, totalSize: length))
            }
            completion()
        }
    }
}
