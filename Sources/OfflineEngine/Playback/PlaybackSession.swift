import Foundation
import Synchronization

/// One player's open of an item's media: its reads start the licence play clock and say
/// where the player is; its end records the resume point and the watched mark
/// (`PlayTracker`). Made by `RangeFetcher.startPlayback`, fed by the front end's reads,
/// ended at the open's last close.
public final class PlaybackSession: Sendable {
    public let itemID: Int64
    /// The media's size in bytes; nil for a piece of an HLS stream (the clock still starts,
    /// and any read of it is playback, but its bytes say nothing about a position).
    let size: Int64?
    let startedAt: Date
    /// The time of a read, in seconds (the engine's clock).
    private let now: @Sendable () -> Double
    private let run: Mutex<PlaybackRun>  // leaf lock
    private let ended = Atomic<Bool>(false)
    private let counted = Atomic<Bool>(false)
    /// Called once, when the reads first count as playback (a rental's play clock starts).
    private let onPlayback: @Sendable () -> Void
    private let onEnd: @Sendable (PlaybackSession) -> Void

    /// - Parameter bytesPerSecond: the most bytes a second of playing takes (`PlaybackRun`).
    init(itemID: Int64, size: Int64?, startedAt: Date, bytesPerSecond: Double? = nil,
         now: @escaping @Sendable () -> Double,
         onPlayback: @escaping @Sendable () -> Void, onEnd: @escaping @Sendable (PlaybackSession) -> Void) {
        self.now = now
        self.itemID = itemID
        self.size = size
        self.startedAt = startedAt
        self.onPlayback = onPlayback
        self.onEnd = onEnd
        run = Mutex(PlaybackRun(threshold: size == nil ? 1 : LicenceClock.playbackThreshold(size: size),
                                bytesPerSecond: bytesPerSecond))
    }

    /// The player read `[offset, offset + length)` of the media. Memory only: called for
    /// every read.
    public func read(offset: Int64, length: Int64) {
        // A run of reads long enough: the same rule as the resume point's, so a frame grab
        // (`ffmpeg -ss`: a header read and one far read) does not start a play clock. A
        // stream's parts (no size) count once they pass its first 2 MiB.
        let time = now()
        let counts = run.withLock { run -> Bool in
            run.note(offset: offset, length: length, at: time)
            return size == nil ? offset + length > LicenceClock.playbackThreshold : run.current != nil
        }
        if counts, !counted.exchange(true, ordering: .acquiringAndReleasing) { onPlayback() }
    }

    /// The player closed the file; later calls do nothing.
    public func end() {
        guard !ended.exchange(true, ordering: .acquiringAndReleasing) else { return }
        onEnd(self)
    }

    /// Where the reads left the player, and the furthest they got (bytes; nil: no run long
    /// enough to be playback).
    var reached: (current: Int64?, furthest: Int64?) {
        run.withLock { ($0.current, $0.furthest) }
    }
}
