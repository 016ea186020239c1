import OfflineHTTP

/// Finds the size of media whose feed gives none, with HEAD requests in parallel.
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
}
