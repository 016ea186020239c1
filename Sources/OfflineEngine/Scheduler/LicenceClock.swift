public import Foundation
public import OfflineStore

/// Licence time arithmetic (DESIGN §1): a purchase never expires; a rental expires
/// `rentalDuration` after acquisition or `playDuration` after the first playback, whichever
/// comes first ("dual expiry"). Pure: the caller passes the time.
public enum LicenceClock {
    /// Playback starts once a player's run of reads spans this many bytes of the media (or a
    /// tenth of a smaller file: a short clip never reaches 2 MiB; `PlaybackRun`); the mount
    /// counts only player-class readers, so backups, thumbnailers and `file` never start it.
    public static let playbackThreshold: Int64 = 2 << 20

    /// min(2 MiB, 10 % of the file), for a file of `size` bytes (2 MiB when unknown).
    public static func playbackThreshold(size: Int64?) -> Int64 {
        guard let size, size > 0 else { return playbackThreshold }
        return min(playbackThreshold, max(1, size / 10))
    }

    /// The absolute expiry of `licence` as recorded (nil: never, or not acquired yet).
    public static func expiry(of licence: Licence) -> Date? {
        guard licence.terms.kind == .rental else { return nil }
        var candidates: [Date] = []
        if let acquired = licence.acquiredAt, let rental = licence.terms.rentalDuration {
            candidates.append(acquired.addingTimeInterval(rental))
        }
        if let played = licence.firstPlayedAt, let play = licence.terms.playDuration {
            candidates.append(played.addingTimeInterval(play))
        }
        return candidates.min()
    }

    public static func isExpired(_ licence: Licence, at now: Date) -> Bool {
        guard let expiry = licence.expiresAt else { return false }
        return expiry <= now
    }


    static func iso(_ date: Date) -> String { date.formatted(.iso8601) }

    /// `user.offline.licence.expires` and `licenceExpires` in `ls --json`: the absolute
    /// expiry; `never` for no licence or a purchase; `not-acquired` for a rental whose
    /// licence is not acquired yet (it has no expiry until then, and "never" read like a
    /// purchase).
    public static func expiryText(_ licence: Licence?) -> String {
        guard let licence else { return "never" }
        // Played while its acquisition failed: the play clock's end is an expiry all the same.
        if licence.terms.kind == .rental && licence.acquiredAt == nil && licence.expiresAt == nil { return "not-acquired" }
        return licence.expiresAt.map(iso) ?? "never"
    }

    /// Whether `licence`'s play clock has yet to start: a rental with a play duration never
    /// played. Its first playback is seen only in reads that reach the engine.
    public static func waitsForFirstPlayback(_ licence: Licence) -> Bool {
        licence.terms.kind == .rental && licence.terms.playDuration != nil && licence.firstPlayedAt == nil
    }

    /// `user.offline.licence.play-expires`: when the play-duration clock ends (started),
    /// `not-started`, or nil for a licence without a play duration.
    public static func playExpiryText(_ licence: Licence?) -> String? {
        guard let licence, licence.terms.kind == .rental, let play = licence.terms.playDuration else { return nil }
        return licence.firstPlayedAt.map { iso($0.addingTimeInterval(play)) } ?? "not-started"
    }
}
