import OfflineHTTP
import OfflineStore

/// Why an HLS stream could not be resolved or downloaded, with the item error code it leaves
/// (DESIGN §1) and a sentence that names the playlist or segment at fault.
public struct HLSFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: ItemErrorCode
    public var message: String

    public init(_ code: ItemErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }

    /// Network trouble: the item waits `idle` and resumes; anything else fails it.
    public var isTransient: Bool { code == .noNetwork || code == .timeout || code == .networkError }

    init(_ error: FetchError, context: String) {
        self.init(error.itemErrorCode, "\(context): \(error.message)")
    }

    init(_ error: HTTPError, context: String) {
        self.init(CachedFile.fetchError(error), context: context)
    }
}
