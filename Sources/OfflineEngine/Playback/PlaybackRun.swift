import Foundation

/// Where a player is in a file, from the reads it makes (pure; `PlaybackSession` holds one).
///
/// Playback reads forward: a run of reads, each starting near where the last ended. A jump
/// (a seek, or a player reading an MP4's index at the end of the file before it starts)
/// begins a new run, and a run counts only once it is `threshold` bytes long: an index read
/// at the end does not make a file watched, and a seek shows once the player plays on.
struct PlaybackRun: Sendable, Equatable {
    /// The bytes a run must span to count (`LicenceClock.playbackThreshold(size:)`).
    let threshold: Int64
    /// How many bytes a second of playing takes at most (the media's bit rate times the
    /// fastest speed a player is taken to play at); nil when the duration is unknown.
    let bytesPerSecond: Double?
    private var start: Int64 = 0
    private var end: Int64 = -1
    /// When the run began, and when a read last took it further (seconds on any clock).
    private var startedAt: Double = 0
    private var extendedAt: Double = 0
    /// The length of the read that last took the run further: its bytes may be played
    /// before the next read (or the close) comes.
    private var lastLength: Int64 = 0
    /// Where the player is: the end of the counting run it last read, in bytes.
    private(set) var current: Int64?
    /// The furthest `current` of the playback.
    private(set) var furthest: Int64?

    /// How far a read may start from the end of the run and still continue it: the kernel
    /// sends a sequential reader's read-ahead in pieces, in any order.
    static let slack: Int64 = 1 << 20

    init(threshold: Int64, bytesPerSecond: Double? = nil) {
        self.threshold = max(1, threshold)
        self.bytesPerSecond = bytesPerSecond.flatMap { $0 > 0 ? $0 : nil }
    }

    /// A read of `[offset, offset + length)` at `time` (seconds).
    mutating func note(offset: Int64, length: Int64, at time: Double = 0) {
        guard length > 0 else { return }
        let readEnd = offset + length
        if end >= 0, offset >= end - Self.slack, offset <= end + Self.slack, offset >= start {
            if readEnd > end { (end, extendedAt, lastLength) = (readEnd, time, length) }
        } else {
            (start, end, startedAt, extendedAt, lastLength) = (offset, readEnd, time, time, length)
        }
        guard end - start >= threshold else { return }
        // A player plays no faster than real time (times its speed), whatever it reads ahead:
        // mpv's cache reads a whole file in seconds (docs/playback.md).
        var reached = end
        if let bytesPerSecond {
            reached = min(end, start + Int64(bytesPerSecond * max(0, extendedAt - startedAt)) + lastLength)
        }
        current = reached
        furthest = max(furthest ?? 0, reached)
    }
}

/// What a playback's bytes mean in seconds, and when an item counts as watched
/// (docs/playback.md).
public enum PlayRule {
    /// The second at byte `offset` of a `size`-byte file lasting `duration` seconds: an
    /// estimate that takes the bit rate as even (nil when either is unknown).
    public static func seconds(atByte offset: Int64, size: Int64?, duration: Double?) -> Double? {
        guard let size, size > 0, let duration, duration > 0 else { return nil }
        return duration * Double(min(max(0, offset), size)) / Double(size)
    }

    /// The second from which a playback that got there counts as watched: 90 % of the
    /// duration or its last 60 seconds, whichever comes first, but never before the middle
    /// (a 30-second clip is not watched once it starts).
    public static func watchedFrom(duration: Double) -> Double {
        min(duration * 0.9, max(duration - 60, duration / 2))
    }

    /// Whether a playback that reached `seconds` of `duration` watched the item.
    public static func isWatched(reached seconds: Double, duration: Double?) -> Bool {
        guard let duration, duration > 0 else { return false }
        return seconds >= watchedFrom(duration: duration)
    }

    /// `1:02:03`, `4:05`: seconds as a person reads them.
    public static func clockText(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded(.down))
        let (hours, minutes, rest) = (whole / 3600, whole / 60 % 60, whole % 60)
        return hours > 0 ? String(format: "%d:%02d:%02d", hours, minutes, rest) : String(format: "%d:%02d", minutes, rest)
    }
}
