import Foundation

/// Hands a fetch's result from the completion's thread to a thread waiting on a semaphore.
/// Locked: a waiter that gave up (a timed wait) may read while a late completion writes.
final class OutcomeBox: @unchecked Sendable {
    // @unchecked: `result` is read and written under `lock` only.
    private let lock = NSLock()
    private var result: Result<Void, FetchError> = .failure(FetchError(.cancelled, "no result"))
    func set(_ value: Result<Void, FetchError>) { lock.withLock { result = value } }
    func get() -> Result<Void, FetchError> { lock.withLock { result } }
}
