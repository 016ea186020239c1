import CCurlShim
import Foundation

/// One configured HTTP exchange on a libcurl easy handle, with its callbacks.
///
/// Owned by the one thread that drives it (a blocking `perform` or a multi loop).
/// The response head is delivered once, before the first body byte (or at the end for an
/// empty body), so a consumer can validate a range response before taking any bytes.
final class CurlTransfer {
    let easy: CurlEasy
    let request: HTTPRequest

    /// Called once with the final response's status and headers; returning false aborts.
    var onHead: ((Int, HTTPHeaders) -> Bool)?
    /// Called with each chunk of body bytes; says what became of it.
    var onBody: ((UnsafeRawBufferPointer) -> BodyAction)?

    /// What the body callback did with a chunk.
    enum BodyAction {
        /// Took all of it.
        case accept
        /// Took none of it: libcurl pauses the transfer and hands the chunk over again once
        /// it is resumed (`CurlEasy.pauseReceiving(false)`).
        case pause
        /// The transfer must stop.
        case abort
    }

    private(set) var status = 0
    private(set) var headers = HTTPHeaders()
    private(set) var bodyBytesReceived: Int64 = 0
    /// Why a callback stopped the transfer, when it did.
    private(set) var abortReason: HTTPError?
    private var headDelivered = false
    private var pendingHeaders = HTTPHeaders()
    private var redirectCount = 0

    init(_ request: HTTPRequest, userAgent: String) throws(HTTPError) {
        self.request = request
        self.easy = try CurlEasy()
        try configure(userAgent: userAgent)
    }

    /// Aborts the transfer from inside a callback with this reason.
    func abort(_ reason: HTTPError) {
        if abortReason == nil { abortReason = reason }
    }

    /// Delivers the head for a bodiless response and turns the libcurl result into ours.
    func finish(_ code: CURLcode) -> HTTPError? {
        if code == CURLE_OK {
            deliverHeadIfNeeded()
            return abortReason
        }
        return abortReason ?? mapError(code)
    }

    var effectiveURL: String { easy.info(string: CURLINFO_EFFECTIVE_URL) ?? request.url }

    // MARK: - Setup

    private func configure(userAgent: String) throws(HTTPError) {
        let unmanagedSelf = Unmanaged.passUnretained(self).toOpaque()
        try easy.set(CURLOPT_URL, request.url)
        try easy.set(CURLOPT_NOSIGNAL, true)
        // Only http and https, for the URL and for every redirect; an https URL may not
        // be redirected to plain http.
        try easy.set(CURLOPT_PROTOCOLS_STR, "http,https")
        let isHTTPS = request.url.lowercased().hasPrefix("https:")
        try easy.set(CURLOPT_REDIR_PROTOCOLS_STR, isHTTPS ? "https" : "http,https")
        try easy.set(CURLOPT_FOLLOWLOCATION, request.maxRedirects > 0)
        try easy.set(CURLOPT_MAXREDIRS, request.maxRedirects)
        try easy.set(CURLOPT_SSL_VERIFYPEER, true)
        try easy.set(CURLOPT_SSL_VERIFYHOST, 2)
        try easy.set(CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS)
        try easy.set(CURLOPT_NETRC, Int(CURL_NETRC_OPTIONAL.rawValue))
        try easy.set(CURLOPT_USERAGENT, userAgent)
        try easy.set(CURLOPT_BUFFERSIZE, request.receiveBufferBytes)
        try easy.set(CURLOPT_TCP_KEEPALIVE, true)

        try easy.set(CURLOPT_CONNECTTIMEOUT_MS, Int(request.timeouts.connect * 1000))
        try easy.set(CURLOPT_LOW_SPEED_LIMIT, request.timeouts.lowSpeedBytesPerSecond)
        try easy.set(CURLOPT_LOW_SPEED_TIME, request.timeouts.lowSpeedSeconds)
        if let total = request.timeouts.total {
            try easy.set(CURLOPT_TIMEOUT_MS, Int(total * 1000))
        }

        if request.acceptCompressed {
            try easy.set(CURLOPT_ACCEPT_ENCODING, "")  // every encoding libcurl can decode
        } else {
            try easy.set(CURLOPT_HTTP_CONTENT_DECODING, false)
        }
        if request.method == .head { try easy.set(CURLOPT_NOBODY, true) }
        if let cap = request.maxBodyBytes { try easy.set(CURLOPT_MAXFILESIZE_LARGE, offset: cap) }
        try easy.setHeaders(request.headerLines)

        try easy.set(CURLOPT_HEADERDATA, pointer: unmanagedSelf)
        try easy.set(CURLOPT_HEADERFUNCTION, callback: { buffer, size, count, context in
            guard let buffer, let context else { return 0 }
            let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
            let length = size * count
            for line in HTTPHeaders.lines(in: UnsafeRawBufferPointer(start: buffer, count: length)) {
                transfer.receiveHeaderLine(line)
            }
            return length
        })
        try easy.set(CURLOPT_WRITEDATA, pointer: unmanagedSelf)
        try easy.set(CURLOPT_WRITEFUNCTION, callback: { buffer, size, count, context in
            guard let buffer, let context else { return 0 }
            let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
            let length = size * count
            switch transfer.receiveBody(UnsafeRawBufferPointer(start: buffer, count: length)) {
            case .accept: return length
            case .pause: return Int(CURL_WRITEFUNC_PAUSE)
            case .abort: return 0
            }
        })
        try easy.set(CURLOPT_PREREQDATA, pointer: unmanagedSelf)
        try easy.setPrereq { context, primaryIP, _, _, _ in
            guard let context else { return 1 }
            let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
            let ip = primaryIP.map { String(cString: $0) } ?? ""
            return transfer.allowConnection(to: ip) ? 0 : 1  // CURL_PREREQFUNC_OK / _ABORT
        }
    }

    // MARK: - Callbacks (on the driving thread)

    private func receiveHeaderLine(_ line: String) {
        if line.hasPrefix("HTTP/") {
            // A new response starts (after a redirect or a 100 Continue): forget the last one.
            pendingHeaders = HTTPHeaders()
        } else {
            pendingHeaders.addLine(line)
        }
    }

    private func receiveBody(_ bytes: UnsafeRawBufferPointer) -> BodyAction {
        deliverHeadIfNeeded()
        if abortReason != nil { return .abort }
        if let cap = request.maxBodyBytes, bodyBytesReceived + Int64(bytes.count) > cap {
            // libcurl 7.88 ignores MAXFILESIZE when the size is not announced.
            abort(HTTPError(.tooLarge, "\(request.url): body exceeds \(cap) bytes"))
            return .abort
        }
        let action = onBody?(bytes) ?? .accept
        switch action {
        case .accept: bodyBytesReceived += Int64(bytes.count)
        case .pause: break  // the same bytes come again
        case .abort: abort(HTTPError(.cancelled, "\(request.url): transfer stopped by its consumer"))
        }
        return action
    }

    private func deliverHeadIfNeeded() {
        guard !headDelivered else { return }
        headDelivered = true
        status = easy.info(long: CURLINFO_RESPONSE_CODE)
        headers = pendingHeaders
        if let onHead, !onHead(status, headers) {
            abort(HTTPError(.cancelled, "\(request.url): response refused by its consumer"))
        }
    }

    private func allowConnection(to ip: String) -> Bool {
        guard request.destinationPolicy == .publicOnly else { return true }
        if AddressClass.isNonPublic(ip: ip) ?? true {
            abort(HTTPError(.forbiddenDestination,
                            "\(request.url): refused to connect to non-public address \(ip)"))
            return false
        }
        return true
    }

    private func mapError(_ code: CURLcode) -> HTTPError {
        let detail = "\(request.url): \(CurlGlobal.describe(code))"
        switch code {
        case CURLE_UNSUPPORTED_PROTOCOL:
            let redirected = easy.info(long: CURLINFO_REDIRECT_COUNT) > 0
            if redirected && request.url.lowercased().hasPrefix("https:") {
                return HTTPError(.insecureRedirect, "\(request.url): redirect to a non-https URL refused")
            }
            // The same code for an answer curl cannot read (an unknown HTTP version): an
            // http(s) URL that was not sent elsewhere met a bad response, not a refused scheme.
            let lower = request.url.lowercased()
            let sentElsewhere = redirected || easy.info(string: CURLINFO_REDIRECT_URL) != nil
            if !sentElsewhere && (lower.hasPrefix("http:") || lower.hasPrefix("https:")) {
                return HTTPError(.network, detail)
            }
            return HTTPError(.unsupportedURL, "\(detail) (only http and https are allowed)")
        case CURLE_URL_MALFORMAT:
            return HTTPError(.badURL, detail)
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT:
            return HTTPError(.couldNotConnect, detail)
        case CURLE_OPERATION_TIMEDOUT:
            return HTTPError(.timeout, detail)
        case CURLE_TOO_MANY_REDIRECTS:
            return HTTPError(.tooManyRedirects, detail)
        case CURLE_FILESIZE_EXCEEDED:
            return HTTPError(.tooLarge, "\(request.url): body exceeds \(request.maxBodyBytes ?? 0) bytes")
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM,
             CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE:
            return HTTPError(.tls, detail)
        default:
            return HTTPError(.network, detail)
        }
    }
}
