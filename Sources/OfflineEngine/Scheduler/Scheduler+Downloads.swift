import Foundation
import OfflineStore
import Synchronization

extension Scheduler {
    /// Errors that a later attempt may clear on its own: retried after back-off.
    static func isRetryable(_ code: ItemErrorCode?) -> Bool {
        switch code {
        case .noNetwork, .timeout, .networkError, .httpError, .corrupted, .downloadFailed, .contentNotFound: true
        default: false
        }
    }

    /// Network trouble: retried without limit (the network comes back); other retryable
    /// errors spend `retry-limit`.
    static func isTransient(_ code: ItemErrorCode?) -> Bool {
        code == .noNetwork || code == .timeout || code == .networkError
    }

    /// `queued` and `idle` items: start what policies, space and slots allow; move the rest
    /// to `idle` with the policy that stops them, or leave them `queued` for a slot.
    func scheduleDownloads(now: Date, policies: PolicySet, wakeAt: inout [Date]) {
        guard let candidates = try? store.items(inStates: [.queued, .idle]) else { return }
        let conditions = conditions(policies)
        holdBackRunning(policies: policies, conditions: conditions, now: now)
        if !runningItems.isEmpty,
           let closes = PolicyGate.nextClosing(policies.downloadWindow, after: now, timeZone: configuration.timeZone) {
            wakeAt.append(closes)  // running downloads stop then
        }
        if NetworkPowerRules.readsPower(policies), !candidates.isEmpty || !runningItems.isEmpty {
            // sysfs tells no change: look again soon while something may start or stop.
            wakeAt.append(now.addingTimeInterval(configuration.powerPollInterval))
        }
        var usedToday = (try? store.usage(day: now, timeZone: configuration.timeZone)) ?? 0
        for item in candidates {
            let (busy, retryAt, runningCount) = state.withLock { s in
                (s.running[item.id] != nil || s.stopped, s.retries[item.id]?.next, s.running.count)
            }
            if busy { continue }
            if item.state == .idle, Self.isRetryable(item.error), let retryAt, retryAt > now {
                wakeAt.append(retryAt)
                continue
            }
            let licence = try? store.licence(itemID: item.id)
            switch PolicyGate.check(item, policies: policies, licence: licence, now: now, usedToday: usedToday,
                                    timeZone: configuration.timeZone, conditions: conditions) {
            case .fail(let code, let message):
                _ = try? store.setState(itemID: item.id, state: .failed, error: code, detail: message, onlyFrom: item.state)
                continue
            case .wait(let code, let message, let until):
                // An out-of-policy message may change while waiting (another rule, a battery
                // percentage); the detail follows it without a state event.
                if item.state != .idle || item.error != code || (code == .outOfPolicy && item.errorDetail != message) {
                    _ = try? store.setState(itemID: item.id, state: .idle, error: code, detail: message, onlyFrom: item.state)
                }
                if let until { wakeAt.append(until) }
                continue
            case .go:
                break
            }
            guard runningCount < policies.maxConcurrentDownloads else {
                // Waiting for a slot is `queued`, whatever stopped it before.
                if item.state == .idle { _ = try? store.setState(itemID: item.id, state: .queued, onlyFrom: .idle) }
                continue
            }
            let need = max(0, (item.size ?? 0) - item.bytesPresent)
            let busyIDs = runningItems
            if let (code, message) = space.makeRoom(for: item, need: need, policies: policies, busy: busyIDs) {
                if item.state != .idle || item.error != code {
                    _ = try? store.setState(itemID: item.id, state: .idle, error: code, detail: message, onlyFrom: item.state)
                }
                wakeAt.append(now.addingTimeInterval(configuration.spaceRecheckInterval))
                continue
            }
            usedToday += need
            let started = state.withLock { s -> Bool in
                guard !s.stopped, s.running[item.id] == nil else { return false }
                s.running[item.id] = now
                return true
            }
            if started { spawn("ofs-download") { [self] in runDownload(item) } }
        }
    }

    /// Running downloads that the download window or a network or power rule now holds back
    /// stop, and go `idle` / `out-of-policy` naming the rule when their thread returns (the
    /// window's opening starts them again, from where they stopped).
    private func holdBackRunning(policies: PolicySet, conditions: NetworkPowerRules.Conditions, now: Date) {
        if !policies.downloadWindow.contains(now, timeZone: configuration.timeZone) {
            for id in runningItems { holdBack(itemID: id, rule: PolicyGate.outsideWindow(policies.downloadWindow)) }
            return
        }
        guard conditions != .unrestricted else { return }
        for id in runningItems {
            guard let item = try? store.item(id: id),
                  let rule = NetworkPowerRules.holding(policies, conditions, originIsLocal: NetworkPowerRules.isLocalOrigin(mediaURL: item.mediaURL))
            else { continue }
            holdBack(itemID: id, rule: rule)
        }
    }

    /// One download on its own thread: licence, media, usage, side files, then the outcome.
    private func runDownload(_ item: Item) {
        guard (try? store.claimDownload(itemID: item.id)) == true else {
            // A command moved it first; apply what it asked if it asked while we started.
            let intent = state.withLock { s -> StopIntent? in
                s.running[item.id] = nil
                return s.intents.removeValue(forKey: item.id)
            }
            if let intent { try? apply(intent, to: item) }
            settled(item.id)
            poke()
            return
        }
        if state.withLock({ $0.intents[item.id] != nil }) {
            finish(item, DownloadResult(itemID: item.id, state: .downloading, error: .cancelled, message: "stopped before it began"))
            return
        }
        let before = (try? store.bytesPresent(itemID: item.id)) ?? 0
        progress.started(itemID: item.id)
        defer { progress.finished(itemID: item.id) }
        var result: DownloadResult
        do {
            try licences.acquireIfNeeded(itemID: item.id)
            result = transfers.downloader.download(itemID: item.id, recordingFailures: false)
        } catch {
            result = DownloadResult(itemID: item.id, state: Self.isTransient(error.code) ? .idle : .failed,
                                    error: error.code, message: error.message)
        }
        let after = (try? store.bytesPresent(itemID: item.id)) ?? before
        try? store.addUsage(bytes: max(0, after - before), day: clock.now(), timeZone: configuration.timeZone)
        if result.succeeded { downloadSideFiles(item) }
        finish(item, result)
    }

    /// Thumbnail and subtitles come with the item; their failure never fails it.
    func downloadSideFiles(_ item: Item, thumbnailOnly: Bool = false) {
        var keys: [CacheFileKey] = item.thumbnailURL == nil ? [] : ["thumbnail"]
        if !thumbnailOnly { keys += item.subtitles.map { "subtitle.\($0.language)" } }
        for key in keys {
            if case .failure(let error) = transfers.downloader.downloadSideFile(itemID: item.id, file: key) {
                _ = try? store.appendEvent(kind: .error, itemID: item.id, sourceID: item.sourceID,
                                           message: "\(item.fileName ?? item.contentID): \(key) not downloaded: \(error.message)")
            }
        }
    }

    private func finish(_ item: Item, _ result: DownloadResult) {
        let now = clock.now()
        let limit = (try? store.policies().retryLimit) ?? 3
        let (intent, retry) = state.withLock { s -> (StopIntent?, RetryState?) in
            s.running[item.id] = nil
            let intent = s.intents.removeValue(forKey: item.id)
            guard intent == nil, !result.succeeded, result.error != .cancelled, result.error != .noSpace else {
                if result.succeeded { s.retries[item.id] = nil }
                return (intent, nil)
            }
            var retry = s.retries[item.id] ?? RetryState()
            retry.attempts += 1
            // A busy origin's Retry-After is the least wait.
            let delay = max(configuration.backoff.delay(attempt: retry.attempts, random: Double.random(in: 0..<1, using: &s.random)),
                            result.retryAfter ?? 0)
            retry.next = now.addingTimeInterval(delay)
            s.retries[item.id] = retry
            return (nil, retry)
        }
        if let intent, !(result.succeeded && intent.yieldsToCompletion) {
            // A pause that came too late to stop a finished download leaves it cached.
            try? apply(intent, to: item)
        } else if !result.succeeded {
            record(result, item: item, retry: retry, limit: limit)
        }
        settled(item.id)
        poke()
    }

    private func record(_ result: DownloadResult, item: Item, retry: RetryState?, limit: Int) {
        let code = result.error ?? .downloadFailed
        switch code {
        case .noSpace, .cacheLimit:
            // The claimed bytes are good: keep them, give back the unclaimed tail now (the file
            // does so by itself too, but the store needs the room to record this state), and
            // wait for space.
            transfers.recoverFromWriteFailure(itemID: item.id)
            _ = try? store.setState(itemID: item.id, state: .idle, error: code, detail: result.message)
        case .cancelled:
            // Cancelled by something other than a command (a reader's cancel, a restart):
            // try again.
            _ = try? store.setState(itemID: item.id, state: .queued)
        default:
            let attempts = retry?.attempts ?? 1
            if Self.isTransient(code) || result.retryAfter != nil || (Self.isRetryable(code) && attempts <= limit) {
                _ = try? store.setState(itemID: item.id, state: .idle, error: code,
                                        detail: "\(result.message) (retry \(attempts))")
            } else {
                // The retry budget is spent: partial data goes (DESIGN §1 `failed`).
                try? transfers.discardMedia(itemID: item.id)
                _ = try? store.setState(itemID: item.id, state: .failed, error: code, detail: result.message)
                if item.type == .hls { transfers.hls.prepareInBackground(itemID: item.id) }
                state.withLock { _ = $0.retries.removeValue(forKey: item.id) }
            }
        }
    }

    /// Tells the commands waiting for the item's download to stop that it has, and that what
    /// they asked is in the store.
    private func settled(_ itemID: Int64) {
        for waiter in state.withLock({ $0.stopWaiters.removeValue(forKey: itemID) }) ?? [] { waiter.signal() }
    }

    /// Carries out what a command asked of an item, once no download of it runs. Throws when
    /// the store cannot record it (a full disk): nothing is removed then, and a command run
    /// at once says so.
    func apply(_ intent: StopIntent, to item: Item) throws {
        switch intent {
        case .pause:
            try store.setState(itemID: item.id, state: .paused)
        case .cancel:
            try transfers.discardMedia(itemID: item.id)
            try store.setRequested(itemID: item.id, false)
            try store.setState(itemID: item.id, state: .discovered, error: .cancelled, detail: "cancelled by the user")
            if item.type == .hls { transfers.hls.prepareInBackground(itemID: item.id) }
        case .evict(let sideFiles):
            try transfers.evict(itemID: item.id, sideFiles: sideFiles)
            try store.setRequested(itemID: item.id, false)
        case .delete:
            try Self.removeFiles(of: item.id, transfers: transfers, store: store)
            try store.setRequested(itemID: item.id, false)
            try store.setState(itemID: item.id, state: .deleted)
        case .licenceExpired:
            try store.setState(itemID: item.id, state: .failed, error: .licenceExpired, detail: "the licence expired")
        case .shutdown:
            try store.setState(itemID: item.id, state: .queued)
        case .holdBack(let rule):
            try store.setState(itemID: item.id, state: .idle, error: .outOfPolicy, detail: rule)
        }
    }

    /// Every cached file of an item (media, thumbnail, subtitles): the store forgets them
    /// first, then the folder goes; when the store cannot (a full disk), the files stay.
    /// Forgets the files of items the store no longer has (what the fetcher holds of them,
    /// their cache folders), but those a reader has open; returns those.
    func forgetFiles(ofRemoved itemIDs: [Int64]) -> [Int64] {
        let open = itemIDs.filter(transfers.fetcher.isOpen)
        let closed = itemIDs.filter { !open.contains($0) }
        try? transfers.fetcher.discardAll(ofItems: closed)
        CacheLayout.removeFolders(library: store.folder, itemIDs: closed)
        return open
    }

    static func removeFiles(of itemID: Int64, transfers: TransferEngine, store: LibraryStore) throws {
        transfers.fetcher.cancel(itemID: itemID)
        try transfers.discardMedia(itemID: itemID)
        try store.clearPresentRanges(itemID: itemID)
        let folder = (transfers.fetcher.cacheFilePath(itemID: itemID, file: "media") as NSString).deletingLastPathComponent
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// After a sync: `download-behavior` for new items, and pending items that got metadata.
    func afterSync(_ report: SyncReport) {
        guard let merge = report.merged else { return }
        // Items the feed dropped (never downloaded): their thumbnails and subtitles go too; one
        // a reader has open is left to the next start's sweep (`Library.removeOrphanCacheFolders`).
        _ = forgetFiles(ofRemoved: merge.removedItemIDs)
        for id in merge.resolvedPendingItemIDs { _ = try? store.setState(itemID: id, state: .queued) }
        for id in merge.replacedMediaItemIDs { replaceMedia(itemID: id) }
        guard merge.added > 0, let behavior = try? store.policy(.downloadBehavior), behavior != .none,
              let source = try? store.source(named: report.sourceName),
              let added = try? store.newestItemIDs(sourceID: source.id, state: .discovered, limit: merge.added)
        else { return }
        for id in added {
            switch behavior {
            case .auto:
                try? store.setRequested(itemID: id, true)
                _ = try? store.setState(itemID: id, state: .queued)
            case .thumbnails:
                if let item = try? store.item(id: id) { downloadSideFiles(item, thumbnailOnly: true) }
            case .none:
                break
            }
        }
    }

    /// The feed gave the item another file (another URL and length) while bytes of the old one
    /// are cached: they go (else the mount serves the old file with the new size), and an item
    /// that was cached or asked for fetches the new one. An item open now keeps them until the
    /// next change (its reader reads on what it began).
    private func replaceMedia(itemID: Int64) {
        guard let item = try? store.item(id: itemID), !transfers.fetcher.isOpen(itemID: itemID) else { return }
        let wanted = item.requested || item.state == .cached || item.state == .partiallyCached
        do { try transfers.evict(itemID: itemID) } catch { return }
        if wanted {
            try? store.setRequested(itemID: itemID, true)
            _ = try? store.setState(itemID: itemID, state: .queued)
        }
        _ = try? store.appendEvent(kind: "evict", itemID: itemID, sourceID: item.sourceID,
                                   message: "\(item.fileName ?? item.contentID): the feed names another file for it: the old one's bytes evicted"
                                       + (wanted ? ", the new one queued" : ""))
    }
}
