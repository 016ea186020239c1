import Foundation

public enum LicenceKind: String, Sendable, Codable, CaseIterable, Hashable {
    /// Never expires.
    case purchase
    /// Expires `rentalDuration` after acquisition, or `playDuration` after first play,
    /// whichever ends first.
    case rental
}

/// Licence terms as a catalog lists them (what the merge stores; acquisition fills the rest).
public struct LicenceTerms: Sendable, Codable, Hashable {
    public var kind: LicenceKind
    /// Seconds from acquisition.
    public var rentalDuration: Double?
    /// Seconds from the first playback.
    public var playDuration: Double?
    public var licenceURL: String?

    public init(kind: LicenceKind, rentalDuration: Double? = nil, playDuration: Double? = nil, licenceURL: String? = nil) {
        self.kind = kind
        self.rentalDuration = rentalDuration
        self.playDuration = playDuration
        self.licenceURL = licenceURL
    }
}

/// An item's licence: the catalog's terms plus what acquisition and playback recorded.
public struct Licence: Sendable, Codable, Hashable {
    public var itemID: Int64
    public var terms: LicenceTerms
    public var acquiredAt: Date?
    public var firstPlayedAt: Date?
    /// Absolute expiry; nil for a purchase (never) or before acquisition.
    public var expiresAt: Date?
    /// Content key for encrypted HLS, when the licence server returned one.
    public var key: Data?

    public init(itemID: Int64, terms: LicenceTerms, acquiredAt: Date? = nil, firstPlayedAt: Date? = nil,
                expiresAt: Date? = nil, key: Data? = nil) {
        self.itemID = itemID
        self.terms = terms
        self.acquiredAt = acquiredAt
        self.firstPlayedAt = firstPlayedAt
        self.expiresAt = expiresAt
        self.key = key
    }
}
