/// The download state of an item (DESIGN §1). Raw values are the names users see in
/// `ls`, `.status`, xattrs and the mount's `state/` folders, and are stored as-is.
public enum ItemState: String, Sendable, Codable, CaseIterable, Hashable {
    /// Requested by content id; metadata not fetched yet.
    case metadataPending = "metadata-pending"
    /// Known from the catalog; nothing requested.
    case discovered
    /// Requested; waiting for a download slot.
    case queued
    /// Bytes are moving.
    case downloading
    /// Requested but stopped by something transient; resumes on its own (`error` says why).
    case idle
    /// Stopped by the user.
    case paused
    /// Every byte is local and verified.
    case cached
    /// The requested part (e.g. the first N seconds of an HLS stream) is local.
    case partiallyCached = "partially-cached"
    /// Permanent failure after the retry budget (`error` says why).
    case failed
    /// Tombstone: files and metadata removed; a re-sync never resurrects it.
    case deleted
}

/// Why an item is `idle` or `failed` (DESIGN §1 error codes, stored as-is).
public enum ItemErrorCode: String, Sendable, Codable, CaseIterable, Hashable {
    case contentNotFound = "content-not-found"
    case noNetwork = "no-network"
    case timeout
    case networkError = "network-error"
    case httpError = "http-error"
    case corrupted
    case cancelled
    case downloadFailed = "download-failed"
    case cacheLimit = "cache-limit"
    case dailyLimit = "daily-limit"
    case outOfPolicy = "out-of-policy"
    case licenceExpired = "licence-expired"
    case noSpace = "no-space"
}

/// What kind of media an item is.
public enum ItemType: String, Sendable, Codable, CaseIterable, Hashable {
    /// A progressive media file.
    case video
    /// An HLS master or media playlist.
    case hls
    case audio
    case file
}
