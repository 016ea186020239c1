import Dispatch
import Foundation
import OfflineHTTP
import OfflineStore
import Synchronization

/// The licence server's answer (docs/catalog-format.md, "Licence URL response").
public struct LicenceResponse: Sendable, Codable, Equatable {
    public var kind: LicenceKind
    public var rentalDuration: Double?
    public var playDuration: Double?
    /// Base64 AES-128 content key of an encrypted HLS stream.
    public var key: String?
}

/// Why a licence could not be acquired or renewed, with the item error code it leaves.
public struct LicenceError: Error, Sendable, CustomStringConvertible {
    public var code: ItemErrorCode
    public var message: String
    public var description: String { message }
}

/// Acquires, renews and clocks item licences. Acquisition happens when a download starts or
/// at the first playback, whichever comes first; the play-duration clock starts with the
/// first playback: a player's run of reads spanning `LicenceClock.playbackThreshold(size:)`.
///
/// Lock order: `noted` is a leaf. Store and network calls happen outside it.
public final class Licences: Sendable {
    private let store: LibraryStore
    private let client: HTTPClient
    private let clock: any EngineClock
    /// Items whose playback was already recorded (or need none): reads skip the store.
    private let noted = Mutex<Set<Int64>>([])
    private let queue = DispatchQueue(label: "offlinefs.licences")
    private let changed = Mutex<[@Sendable (Int64) -> Void]>([])

    public init(store: LibraryStore, client: HTTPClient, clock: any EngineClock) {
        self.store = store
        self.client = client
        self.clock = clock
    }

    /// Called after a licence changes (a new expiry to schedule).
    public func onChange(_ handler: @escaping @Sendable (Int64) -> Void) {
        changed.withLock { $0.append(handler) }
    }

    /// Acquires the licence of an item about to download, once. Blocking (network).
    public func acquireIfNeeded(itemID: Int64) throws(LicenceError) {
        let licence: Licence?
        do { licence = try store.licence(itemID: itemID) } catch {
            throw LicenceError(code: .downloadFailed, message: "library database: \(error)")
        }
        guard let licence, licence.acquiredAt == nil else { return }
        _ = try acquire(licence)
    }

    /// Re-acquires an item's licence now: new terms from the licence URL when there is one,
    /// the rental and play clocks restarted. Blocking (network).
    @discardableResult
    public func renew(itemID: Int64) throws(LicenceError) -> Licence {
        let licence: Licence?
        do { licence = try store.licence(itemID: itemID) } catch {
            throw LicenceError(code: .downloadFailed, message: "library database: \(error)")
        }
        guard let licence else {
            throw LicenceError(code: .licenceExpired, message: "the item has no licence: its catalog entry names none")
        }
        var fresh = licence
        fresh.firstPlayedAt = nil
        _ = noted.withLock { $0.remove(itemID) }
        return try acquire(fresh)
    }

    /// - Parameter playedAt: acquired by the first playback, at this time: its play clock
    ///   starts in the same write (one expiry, and one `licence-expiring` warning, not two).
    private func acquire(_ licence: Licence, playedAt: Date? = nil) throws(LicenceError) -> Licence {
        var updated = licence
        if let url = licence.terms.licenceURL {
            let response = try fetch(url)
            updated.terms.kind = response.kind
            updated.terms.rentalDuration = response.rentalDuration
            updated.terms.playDuration = response.playDuration
            if let key = response.key { updated.key = Data(base64Encoded: key) }
        }
        updated.acquiredAt = clock.now()
        if let playedAt { updated.firstPlayedAt = playedAt }
        updated.expiresAt = LicenceClock.expiry(of: updated)
        do { try store.putLicence(updated) } catch {
            throw LicenceError(code: .downloadFailed, message: "library database: \(error)")
        }
        _ = try? store.appendEvent(kind: "licence", itemID: licence.itemID,
                                   message: "licence acquired\(playedAt == nil ? "" : " at first playback"): \(updated.terms.kind.rawValue), "
                                       + "expires \(updated.expiresAt.map(LicenceClock.iso) ?? "never")")
        notify(licence.itemID)
        return updated
    }

    private func fetch(_ url: String) throws(LicenceError) -> LicenceResponse {
        let host = URL(string: url)?.host ?? ""
        let request = HTTPRequest(url: url, headers: [("Accept", "application/json")], maxBodyBytes: 1 << 20,
                                  timeouts: .document, destinationPolicy: .forFeed(host: host))
        switch client.perform(request) {
        case .failure(let error):
            throw LicenceError(code: .noNetwork, message: "licence server \(url): \(error.message)")
        case .success(let response):
            guard response.status == 200 else {
                throw LicenceError(code: .httpError, message: "licence server \(url): HTTP \(response.status)")
            }
            do {
                return try JSONDecoder().decode(LicenceResponse.self, from: response.body)
            } catch {
                throw LicenceError(code: .downloadFailed, message: "licence server \(url): unreadable response (\(error))")
            }
        }
    }

    /// A player's reads of the item began to count as playback (`PlaybackSession`). Fast:
    /// after the first playback of an item is recorded, later ones touch only memory.
    public func notePlayback(itemID: Int64) {
        guard noted.withLock({ $0.insert(itemID).inserted }) else { return }
        let now = clock.now()
        queue.async { [self] in
            guard var licence = try? store.licence(itemID: itemID), licence.terms.kind == .rental else { return }
            if licence.acquiredAt == nil {
                // A player streams a rental nobody downloaded or acquired: playing it takes the
                // licence, as a download would (else it would expire while saying not-acquired).
                do throws(LicenceError) {
                    _ = try acquire(licence, playedAt: now)
                    return
                } catch {
                    _ = try? store.appendEvent(kind: "licence", itemID: itemID, message: "not acquired at first playback: \(error.message)")
                }
            }
            guard licence.terms.kind == .rental, licence.terms.playDuration != nil, licence.firstPlayedAt == nil else { return }
            licence.firstPlayedAt = now
            licence.expiresAt = LicenceClock.expiry(of: licence)
            try? store.putLicence(licence)
            _ = try? store.appendEvent(kind: "licence", itemID: itemID,
                                       message: "first playback; expires \(licence.expiresAt.map(LicenceClock.iso) ?? "never")")
            notify(itemID)
        }
    }

    /// Waits until recorded playbacks are in the store (tests, shutdown).
    public func drain() {
        queue.sync {}
    }

    private func notify(_ itemID: Int64) {
        for handler in changed.withLock({ $0 }) { handler(itemID) }
    }
}
