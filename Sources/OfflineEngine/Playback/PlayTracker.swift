import Dispatch
import Foundation
import OfflineStore

/// Records what players played (docs/playback.md): at the end of each `PlaybackSession`, the
/// resume point and, once the playback reached `PlayRule.watchedFrom`, the watched mark.
/// Store writes run on a queue of their own, never on a reader's thread.
public final class PlayTracker: Sendable {
    private let store: LibraryStore
    private let licences: Licences
    private let clock: any EngineClock
    /// The fastest a player is taken to play (`-o playback-speed`): its reads count as
    /// played no faster than this many seconds of media a second.
    private let speed: Double
    private let queue = DispatchQueue(label: "offlinefs.playback")

    public init(store: LibraryStore, licences: Licences, clock: any EngineClock, speed: Double = 1) {
        self.store = store
        self.licences = licences
        self.clock = clock
        self.speed = speed
    }

    /// A player opened the media of `itemID` (`size` bytes; nil for a piece of an HLS
    /// stream, whose offsets are then places in the stream).
    public func start(itemID: Int64, size: Int64?) -> PlaybackSession {
        let licences = licences
        // One look-up per player's open: the media's bit rate bounds what its reads count.
        let duration = size == nil ? nil : (try? store.item(id: itemID))?.duration
        let bytesPerSecond = speed.isFinite ? size.flatMap { size in duration.map { Double(size) / $0 * speed } } : nil
        let clock = clock
        return PlaybackSession(
            itemID: itemID, size: size, startedAt: clock.now(), bytesPerSecond: bytesPerSecond,
            now: { clock.now().timeIntervalSinceReferenceDate },
            onPlayback: { licences.notePlayback(itemID: itemID) },
            onEnd: { [self] session in queue.async { self.record(session) } })
    }

    /// Waits until ended playbacks are in the store (tests, shutdown).
    public func drain() {
        queue.sync {}
    }

    private func record(_ session: PlaybackSession) {
        let reached = session.reached
        guard let current = reached.current, let furthest = reached.furthest,
              let item = try? store.item(id: session.itemID) else { return }
        // A piece of an HLS stream (no size): the playback sets `last-played` only.
        let size = session.size
        let position = PlayRule.seconds(atByte: current, size: size, duration: item.duration)
        let watched = PlayRule.seconds(atByte: furthest, size: size, duration: item.duration)
            .map { PlayRule.isWatched(reached: $0, duration: item.duration) } ?? false
        _ = try? store.recordPlayback(itemID: item.id, startedAt: session.startedAt, position: position,
                                      watched: watched, at: clock.now())
    }
}
