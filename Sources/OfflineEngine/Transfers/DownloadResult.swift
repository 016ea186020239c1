import OfflineStore

/// How one whole-item download ended, with the state it left the item in.
public struct DownloadResult: Sendable, Equatable, CustomStringConvertible {
    public var itemID: Int64
    public var state: ItemState
    public var error: ItemErrorCode?
    public var message: String
    /// The origin was busy and asked for a wait (`FetchError.retryAfter`).
    public var retryAfter: Double?

    public init(itemID: Int64, state: ItemState, error: ItemErrorCode?, message: String, retryAfter: Double? = nil) {
        (self.itemID, self.state, self.error, self.message, self.retryAfter) = (itemID, state, error, message, retryAfter)
    }

    /// The download got what was asked: every byte, or the asked part of an HLS stream.
    public var succeeded: Bool { state == .cached || state == .partiallyCached }

    public var description: String {
        error.map { "\(state.rawValue) (\($0.rawValue)): \(message)" } ?? "\(state.rawValue): \(message)"
    }
}

extension FetchError {
    /// The item error code (DESIGN §1) a download records for this failure.
    var itemErrorCode: ItemErrorCode {
        switch reason {
        case .noNetwork: .noNetwork
        case .timeout: .timeout
        case .network, .contentChanged: .networkError
        case .httpStatus: .httpError
        case .noSpace: .noSpace
        case .refused: .downloadFailed
        case .outOfDescriptors: .downloadFailed
        case nil:
            switch code {
            case .unavailable: .noNetwork
            case .timedOut: .timeout
            case .originError: .networkError
            case .noSuchItem: .contentNotFound
            case .cacheWriteFailed: .downloadFailed
            case .cancelled: .cancelled
            }
        }
    }

    /// Transient failures leave the item `idle` (it resumes later); the rest `failed`.
    var isTransient: Bool {
        if reason == .outOfDescriptors || retryAfter != nil { return true }
        return switch itemErrorCode {
        case .noNetwork, .timeout, .networkError: true
        default: false
        }
    }
}
