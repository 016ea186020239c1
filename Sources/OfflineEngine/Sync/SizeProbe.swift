import OfflineHTTP

/// Finds the size of media and side files whose feed gives none, with HEAD requests in parallel.
struct SizeProbe {
    let client: HTTPClient
    let settings: SyncSettings
    let destinationPolicy: DestinationPolicy

    /// `Content-Length` of each URL's HEAD response; nil where the origin does not say.
    func sizes(of urls: [String]) -> [Int64?] {
        guard !urls.isEmpty else { return [] }
        let requests = urls.map {
            HTTPRequest(url: $0, method: .head, timeouts: settings.probeTimeouts,
                        destinationPolicy: destinationPolicy)
        }
        return client.performAll(requests, maxParallel: settings.sizeProbeParallelism).map { result in
            guard case .success(let response) = result, response.isSuccess else { return nil }
            return response.contentLength.flatMap { $0 > 0 ? $0 : nil }
        }
    }

    /// `sizes(of:)` for side files, which are small: one whose HEAD gives no length (a
    /// generated image, a server that refuses HEAD) is fetched, up to `sideFileFetchCap` bytes,
    /// and its bytes counted. Media never is: it may be gigabytes.
    func sideFileSizes(of urls: [String]) -> [Int64?] {
        var sizes = sizes(of: urls)
        let unknown = sizes.indices.filter { sizes[$0] == nil }
        guard !unknown.isEmpty else { return sizes }
        let requests = unknown.map {
            HTTPRequest(url: urls[$0], maxBodyBytes: settings.sideFileFetchCap, timeouts: settings.probeTimeouts,
                        destinationPolicy: destinationPolicy)
        }
        for (index, result) in zip(unknown, client.performAll(requests, maxParallel: settings.sideFileFetchParallelism)) {
            guard case .success(let response) = result, response.isSuccess, !response.body.isEmpty else { continue }
            sizes[index] = Int64(response.body.count)
        }
        return sizes
    }
}
