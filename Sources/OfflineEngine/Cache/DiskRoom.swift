import Glibc
import Synchronization

/// Keeps the last `keepFree` bytes of the library's disk for the store: a cache write that
/// would leave less fails as a full disk does (`ENOSPC`). Streams are not held to
/// `free-space-reserve` while they write (eviction catches up after), so without this floor
/// they could fill the disk to the last byte, and then no eviction, delete or command could
/// be recorded to free it.
final class DiskRoom: Sendable {
    let keepFree: Int64
    /// Bytes that may be written before the free space is asked again: half of what was above
    /// the floor at the last ask (other writers on the disk take their share meanwhile).
    private let budget = Atomic<Int64>(0)
    private let shortageHandlers = Mutex<[@Sendable () -> Void]>([])  // leaf lock

    init(keepFree: Int64) {
        self.keepFree = keepFree
    }

    /// Calls `handler` whenever a cache write found no room (the floor, or the disk full).
    func onShortage(_ handler: @escaping @Sendable () -> Void) {
        shortageHandlers.withLock { $0.append(handler) }
    }

    func ranOut() {
        for handler in shortageHandlers.withLock({ $0 }) { handler() }
    }

    /// Whether `count` more bytes may be written to the file behind `fd`.
    func allows(_ count: Int, fd: Int32) -> Bool {
        guard keepFree > 0 else { return true }
        if budget.subtract(Int64(count), ordering: .relaxed).newValue >= 0 { return true }
        var info = statvfs()
        guard fstatvfs(fd, &info) == 0 else { return true }
        let above = Int64(info.f_bavail) * Int64(info.f_frsize) - keepFree
        budget.store(max(0, (above - Int64(count)) / 2), ordering: .relaxed)
        return above >= Int64(count)
    }
}
