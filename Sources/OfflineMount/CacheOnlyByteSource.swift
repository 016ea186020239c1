import Foundation
import OfflineEngine
import OfflineHTTP
import OfflineStore
import Synchronization

/// An `ItemByteSource` that serves only bytes already in the cache, with no range fetcher:
/// missing bytes fail at once with `.unavailable`. A stand-in until the engine's range
/// fetcher is merged (`ByteSourceWiring`), and honest about it: availability comes from the
/// store's range map (a store read, where the real fetcher answers from memory).
///
/// Cache files: `<library>/cache/<item id>/<file key>`.
public final class CacheOnlyByteSource: ItemByteSource {
    private let store: LibraryStore
    private let cacheFolder: URL
    private let readers = Mutex<[Int64: Int]>([:])  // protected: open readers per item (leaf lock)

    public init(store: LibraryStore) {
        self.store = store
        self.cacheFolder = store.folder.appendingPathComponent("cache")
    }

    public func cacheFilePath(itemID: Int64, file: CacheFileKey) -> String {
        cacheFolder.appendingPathComponent(String(itemID)).appendingPathComponent(file).path
    }

    public func isAvailable(itemID: Int64, file: CacheFileKey, range: ByteRange) -> Bool {
        guard !range.isEmpty else { return true }
        return (try? store.isPresent(itemID: itemID, file: file, range: range.start..<range.end)) ?? false
    }

    @discardableResult
    public func whenAvailable(itemID: Int64, file: CacheFileKey, range: ByteRange, readAhead: Int64,
                              deadline: ContinuousClock.Instant,
                              completion: @escaping @Sendable (Result<Void, FetchError>) -> Void) -> any FetchTicket {
        if isAvailable(itemID: itemID, file: file, range: range) {
            completion(.success(()))
        } else {
            completion(.failure(FetchError(.unavailable, "bytes \(range) of item \(itemID) are not cached and this build has no range fetcher")))
        }
        return CompletedTicket()
    }

    public func readerOpened(itemID: Int64) {
        readers.withLock { $0[itemID, default: 0] += 1 }
    }

    public func readerClosed(itemID: Int64) {
        readers.withLock { readers in
            if let count = readers[itemID] { readers[itemID] = count > 1 ? count - 1 : nil }
        }
    }

    private struct CompletedTicket: FetchTicket {
        func cancel() {}
    }
}

/// Where the mount gets its `ItemByteSource`. The one line to change when the engine's range
/// fetcher lands (e.g. `library.byteSource`); the tests use the same function, so they fill
/// the cache where the mount reads it.
public enum ByteSourceWiring {
    public static func byteSource(for library: Library) -> any ItemByteSource {
        CacheOnlyByteSource(store: library.store)
    }
}
