/// Why an HTTP exchange failed, in terms the engine maps to the design's error codes.
public struct HTTPError: Error, Sendable, CustomStringConvertible, Equatable {
    public enum Code: String, Sendable {
        /// DNS failure or connection refused: the origin cannot be reached.
        case couldNotConnect
        /// Connect timeout, total timeout, or a stall below the low-speed limit.
        case timeout
        /// Connection reset, invalid response, body shorter than promised.
        case network
        /// A scheme other than http/https, in the URL or a redirect.
        case unsupportedURL
        /// The URL cannot be parsed.
        case badURL
        /// More redirects than allowed, or a loop.
        case tooManyRedirects
        /// An HTTPS URL redirected to plain HTTP.
        case insecureRedirect
        /// The body passed the request's byte cap.
        case tooLarge
        /// A loopback, link-local or private address that the request's policy forbids.
        case forbiddenDestination
        /// TLS handshake or certificate verification failed.
        case tls
        /// The transfer was cancelled by its owner.
        case cancelled
        /// The transfer loop ended it to give a reader the link
        /// (`TransferLoop.Configuration.endHeldBelow`): ask again for the rest later.
        case heldBack
        /// A libcurl call that should not fail did.
        case `internal`
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
