import Foundation
import OfflineStore

/// Licence time arithmetic (DESIGN §1): a purchase never expires; a rental expires
/// `rentalDuration` after acquisition or `playDuration` after the first playback, whichever
/// comes first ("dual expiry"). Pure: the caller passes the time.
public enum LicenceClock {
    /// Playback starts with the first read past this many bytes of the media, so a
    /// thumbnailer or `file` reading headers does not start the play-duration clock.
    public static let playbackThreshold: Int64 = 2 << 20

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

    /// Whether a read of `[offset, offset + length)` is playback.
    public static func isPlayback(offset: Int64, length: Int64) -> Bool {
        offset + length > playbackThreshold
    }

    static func iso(_ date: Date) -> String { date.formatted(.iso8601) }
}
