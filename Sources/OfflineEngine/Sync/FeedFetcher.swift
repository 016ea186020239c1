import Foundation
import OfflineFeeds
import OfflineHTTP

/// A sync failure, with the sentence stored as the source's sync error.
struct SyncFailure: Error {
    var message: String
    init(_ message: String) { self.message = message }
}

/// Fetches a source's feed documents: size-capped, time-bounded, conditional on the
/// validators of the last good sync, and only from destinations the source may reach.
struct FeedFetcher {
    let client: HTTPClient
    let settings: SyncSettings
    let destinationPolicy: DestinationPolicy

    struct Document {
        var body: Data
        var effectiveURL: URL
        var etag: String?
        var lastModified: String?
    }

    enum Answer {
        case notModified
        case document(Document)
    }

    /// A page of the feed, conditional on the validators its last fetch gave (none: always
    /// the whole page); `notModified` when they still match.
    func fetchPage(url: String, etag: String? = nil, lastModified: String? = nil) throws(SyncFailure) -> Answer {
        var request = documentRequest(url)
        request.ifNoneMatch = etag
        request.ifModifiedSince = lastModified
        let response = try perform(request)
        if response.status == 304 { return .notModified }
        return .document(try document(from: response, url: url))
    }

    private func documentRequest(_ url: String) -> HTTPRequest {
        HTTPRequest(
            url: url,
            headers: [("Accept", "application/json, application/rss+xml, application/atom+xml, application/xml;q=0.9, */*;q=0.5")],
            maxBodyBytes: Int64(settings.feedLimits.maxDocumentBytes),
            timeouts: settings.documentTimeouts,
            acceptCompressed: true,
            destinationPolicy: destinationPolicy)
    }

    private func perform(_ request: HTTPRequest) throws(SyncFailure) -> HTTPResponse {
        switch client.perform(request) {
        case .success(let response): return response
        case .failure(let error):
            if error.code == .tooLarge {
                throw SyncFailure("feed is larger than the \(settings.feedLimits.maxDocumentBytes)-byte limit (\(request.url))")
            }
            throw SyncFailure(error.message)
        }
    }

    private func document(from response: HTTPResponse, url: String) throws(SyncFailure) -> Document {
        guard response.status == 200 else {
            throw SyncFailure("HTTP \(response.status) from \(url)")
        }
        guard let effectiveURL = URL(string: response.effectiveURL) ?? URL(string: url) else {
            throw SyncFailure("invalid feed URL \(url)")
        }
        return Document(body: response.body, effectiveURL: effectiveURL,
                        etag: response.etag, lastModified: response.lastModified)
    }
}
