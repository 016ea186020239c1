import Foundation
import OfflineStore

/// Performs `LibraryCommand`s (DESIGN §5): with a running engine (the mount, `download
/// --wait`) it stops running transfers and wakes the scheduler; without one it changes the
/// store (and the cache folder) directly, and requests stay `queued` until an engine runs.
///
/// `perform` never waits on the network when an engine runs (the mount calls it from FUSE
/// threads): `sync` and `renew` then run on engine threads and report in `.events`.
public struct LibraryCommands: CommandPerformer {
    public let library: Library
    public let engine: Engine?

    public init(library: Library, engine: Engine? = nil) {
        self.library = library
        self.engine = engine
    }

    private var store: LibraryStore { library.store }

    public func perform(_ command: LibraryCommand) throws -> String {
        let reply = try performWithoutPoke(command)
        engine?.scheduler.poke()
        return reply
    }

    private func performWithoutPoke(_ command: LibraryCommand) throws -> String {
        switch command {
        case .download(let reference, let options): return try download(reference, options)
        case .pause(let reference): return try pause(resolve(reference))
        case .resume(let reference): return try resume(resolve(reference))
        case .cancel(let reference): return try stop(resolve(reference), .cancel, "cancelled")
        case .delete(let reference):
            let item = try resolve(reference)
            try refuseIfLocked(item)
            return try stop(item, .delete, "deleted")
        case .evict(let reference, let sideFiles): return try evict(resolve(reference), sideFiles: sideFiles)
        case .lock(let reference):
            let item = try resolve(reference)
            try store.setLocked(itemID: item.id, true)
            return "\(name(item)): locked"
        case .unlock(let reference):
            let item = try resolve(reference)
            try store.setLocked(itemID: item.id, false)
            return "\(name(item)): unlocked"
        case .renew(let reference): return try renew(resolve(reference))
        case .acquire(let reference): return try renew(resolve(reference), verb: "acquire", done: "licence acquired")
        case .played(let reference, let span): return try played(resolve(reference), span)
        case .setWatched(let reference, let watched):
            let item = try resolve(reference)
            try store.markPlayState(itemID: item.id, watched: watched, at: now)
            return "\(name(item)): " + (watched ? "watched" : "not watched")
        case .setPosition(let reference, let seconds):
            let item = try resolve(reference)
            if let duration = item.duration, duration > 0, seconds > duration {
                throw EngineError.invalidArgument("\(name(item)): \(PlayRule.clockText(seconds)) is past its end (\(PlayRule.clockText(duration)))")
            }
            try store.markPlayState(itemID: item.id, position: seconds, at: now)
            return "\(name(item)): resume at \(PlayRule.clockText(seconds))"
        case .sync(let source): return try sync(source)
        case .addSource(let name, let url):
            try library.addSource(name: name, feedURL: url)
            return "source \(name) added"
        case .removeSource(let name):
            if let engine { try engine.removeSource(name: name) } else { try library.removeSource(name: name) }
            return "source \(name) removed"
        case .subscribe(let name):
            try store.setSubscribed(name: name, true)
            return "source \(name) subscribed"
        case .unsubscribe(let name):
            try store.setSubscribed(name: name, false)
            return "source \(name) unsubscribed"
        case .setPolicy(let name, let value):
            let canonical = try library.setPolicy(name, value)
            return "\(name) = \(canonical)"
        }
    }

    // MARK: - Items

    private func resolve(_ reference: String) throws -> Item {
        try ItemReference.resolve(reference, in: store)
    }

    private func name(_ item: Item) -> String { item.fileName ?? item.contentID }

    /// Queues an item (any state but `cached`/`downloading`); an unknown content id of a known
    /// source becomes `metadata-pending`.
    private func download(_ reference: String, _ options: DownloadOptions) throws -> String {
        let item: Item
        do {
            item = try resolve(reference)
        } catch let error as EngineError {
            guard let slash = reference.firstIndex(of: "/"),
                  let source = try store.source(named: String(reference[..<slash])) else { throw error }
            let contentID = String(reference[reference.index(after: slash)...])
            guard !contentID.isEmpty, !contentID.contains("/") else { throw error }
            let pending = try store.addPendingItem(sourceID: source.id, contentID: contentID)
            return "\(reference): metadata-pending (looking it up)"
                + (engine == nil ? "; an engine fetches it (offlinefs download --wait, or a mount)" : "") + idSuffix(pending)
        }
        engine?.scheduler.resetRetries(itemID: item.id)
        let quality = options.quality.flatMap { $0 == .auto ? nil : $0.text }
        try store.setRequested(itemID: item.id, true, quality: quality, audio: options.audio.flatMap(HLSAudioLanguages.canonical),
                               partialSeconds: options.partialSeconds)
        try store.resetHLSChoice(itemID: item.id, quality: options.quality == .auto, audio: options.audio?.isEmpty == true)
        switch item.state {
        case .cached where try choiceChanged(item):
            try store.setState(itemID: item.id, state: .queued)
            return "\(name(item)): queued (another variant or audio asked)"
        case .cached:
            return "\(name(item)): already cached"
        case .downloading, .queued, .metadataPending:
            return "\(name(item)): already \(item.state.rawValue)"
        default:
            try store.setState(itemID: item.id, state: item.mediaURL == nil ? .metadataPending : .queued)
            return "\(name(item)): queued" + (engine == nil ? " (an engine downloads it: offlinefs download --wait, or a mount)" : "")
        }
    }

    private var now: Date { engine?.clock.now() ?? Date() }

    /// `played`: through (watched), or a span whose end is the resume point and watches the
    /// item once it reaches `PlayRule.watchedFrom`.
    private func played(_ item: Item, _ span: PlayedSpan?) throws -> String {
        guard let span else {
            try store.markPlayState(itemID: item.id, watched: true, played: true, at: now)
            return "\(name(item)): played, watched"
        }
        let watched = PlayRule.isWatched(reached: span.end, duration: item.duration)
        try store.markPlayState(itemID: item.id, position: span.end, watched: watched ? true : nil, played: true, at: now)
        return "\(name(item)): played to \(PlayRule.clockText(span.end))" + (watched ? ", watched" : "")
    }

    private func idSuffix(_ item: Item) -> String { " [id \(item.id)]" }

    /// Whether an HLS item's stored choice (quality, audio) now differs from the rendition it
    /// was downloaded in: then a download fetches it again.
    private func choiceChanged(_ item: Item) throws -> Bool {
        guard item.type == .hls, let record = try store.hlsStream(itemID: item.id),
              let updated = try store.item(id: item.id) else { return false }
        return !record.isChoice(quality: updated.quality, audio: updated.audioLanguages)
    }

    private func pause(_ item: Item) throws -> String {
        switch item.state {
        case .queued, .idle, .metadataPending, .downloading:
            // The engine may be starting it this instant: it decides under its own lock.
            if let engine { try engine.stop(item, .pause) } else { try store.setState(itemID: item.id, state: .paused) }
        case .paused:
            return "\(name(item)): already paused"
        default:
            throw EngineError.invalidArgument("\(name(item)) is \(item.state.rawValue): only a queued, idle or downloading item can be paused")
        }
        return "\(name(item)): paused"
    }

    /// `paused` and `idle` items are queued again at once (back-off forgotten); `failed` is
    /// retried as an explicit download.
    private func resume(_ item: Item) throws -> String {
        switch item.state {
        case .paused, .idle, .failed:
            engine?.scheduler.resetRetries(itemID: item.id)
            try store.setRequested(itemID: item.id, true)
            try store.setState(itemID: item.id, state: item.mediaURL == nil ? .metadataPending : .queued)
            return "\(name(item)): queued"
        case .queued, .downloading, .cached, .metadataPending:
            return "\(name(item)): already \(item.state.rawValue)"
        default:
            throw EngineError.invalidArgument("\(name(item)) is \(item.state.rawValue): use download to request it")
        }
    }

    private func stop(_ item: Item, _ intent: StopIntent, _ done: String) throws -> String {
        if intent == .cancel {
            // A cached item has no download to stop (evict removes its bytes); a locked one's
            // bytes stay until it is unlocked, as with evict and delete.
            if [.discovered, .deleted, .cached].contains(item.state) {
                return "\(name(item)): nothing to cancel (\(item.state.rawValue))"
            }
            if item.locked && item.bytesPresent > 0 {
                throw EngineError.invalidArgument("\(name(item)) is locked: cancel would discard its bytes; pause it, or unlock it first")
            }
        }
        if let engine {
            try engine.stop(item, intent)
        } else {
            try applyWithoutEngine(intent, item)
        }
        return "\(name(item)): \(done)"
    }

    /// A pinned item's files go only once it is unlocked: by no policy, and by no evict or delete.
    private func refuseIfLocked(_ item: Item) throws {
        guard !item.locked else { throw EngineError.invalidArgument("\(name(item)) is locked; unlock it first") }
    }

    private func evict(_ item: Item, sideFiles: Bool) throws -> String {
        try refuseIfLocked(item)
        return try stop(item, .evict(sideFiles: sideFiles), sideFiles ? "evicted with its side files" : "evicted (side files kept)")
    }

    /// The store and the cache folder, no engine: nothing is running, so files can go now.
    private func applyWithoutEngine(_ intent: StopIntent, _ item: Item) throws {
        let cache = CacheLayout.cacheFolder(library: library.folder).appendingPathComponent(String(item.id))
        func drop(_ files: [String]?) throws {
            if let files {
                for file in files {
                    try store.clearPresentRanges(itemID: item.id, file: file)
                    try? FileManager.default.removeItem(at: cache.appendingPathComponent(file))
                }
            } else {
                try store.clearPresentRanges(itemID: item.id)
                try? FileManager.default.removeItem(at: cache)
            }
        }
        switch intent {
        case .cancel:
            try drop(TransferEngine.mediaFiles(itemID: item.id, store: store, hls: HLSStreams(store: store)))
            try store.removeHLSStream(itemID: item.id)
            try store.setRequested(itemID: item.id, false)
            try store.setState(itemID: item.id, state: .discovered, error: .cancelled, detail: "cancelled by the user")
        case .evict(let sideFiles):
            let side = sideFiles ? TransferEngine.sideFiles(of: item) : []
            try drop(TransferEngine.mediaFiles(itemID: item.id, store: store, hls: HLSStreams(store: store)) + side)
            try store.setDownloaded(itemID: item.id, at: nil)
            try store.setRequested(itemID: item.id, false)
            if item.state != .discovered { try store.setState(itemID: item.id, state: .discovered) }
        case .delete:
            try drop(nil)
            try store.setRequested(itemID: item.id, false)
            try store.setState(itemID: item.id, state: .deleted)
        case .pause, .licenceExpired, .shutdown, .holdBack:
            break
        }
    }

    /// Acquires the item's licence again (or for the first time: `acquire`), without
    /// downloading anything.
    private func renew(_ item: Item, verb: String = "renew", done: String = "licence renewed") throws -> String {
        let licences = engine?.licences ?? Licences(store: store, client: library.client, clock: SystemClock())
        let work = { @Sendable () throws -> String in
            do {
                let licence = try licences.renew(itemID: item.id)
                // A licence that stopped the item no longer does.
                if let current = try? store.item(id: item.id), current.error == .licenceExpired {
                    let complete = current.size.map { current.bytesPresent >= $0 } ?? false
                    let next: ItemState = complete ? .cached : (current.requested ? .queued : .discovered)
                    _ = try? store.setState(itemID: item.id, state: next)
                }
                return "\(name(item)): \(done), expires \(licence.expiresAt.map(LicenceClock.iso) ?? "never")"
            } catch {
                _ = try? store.appendEvent(kind: .error, itemID: item.id, sourceID: item.sourceID,
                                           message: "\(name(item)): \(verb) failed: \(error)")
                throw EngineError.invalidArgument("\(name(item)): \(verb) failed: \(error)")
            }
        }
        guard let engine else { return try work() }
        engine.scheduler.spawn("ofs-renew") {
            _ = try? work()
            engine.scheduler.poke()
        }
        return "\(name(item)): renewing (see .events)"
    }

    private func sync(_ sourceName: String?) throws -> String {
        if let sourceName, try store.source(named: sourceName) == nil {
            throw EngineError.notFound("no source named '\(sourceName)'")
        }
        guard let engine else {
            let reports = try library.sync(sourceName: sourceName)
            return reports.map { "\($0.sourceName): \($0.outcome)" }.joined(separator: "\n")
        }
        engine.scheduler.requestSync(sourceName)
        return "syncing \(sourceName ?? "every subscribed source") (see .events)"
    }
}
