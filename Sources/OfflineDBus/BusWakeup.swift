import CSystemShim
import Glibc

/// Wakes a thread waiting on a bus (`BusConnection.wait(wakeup:)`) or on nothing
/// (`wait(timeout:)`) from any other thread: an `eventfd(2)`, so a stop never waits for the bus.
public final class BusWakeup: Sendable {
    private let descriptor: Int32

    public init() throws(BusError) {
        let fd = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard fd >= 0 else { throw BusError(call: "eventfd", returned: -errno) }
        descriptor = fd
    }

    deinit { close(descriptor) }

    /// Wakes the waiter (now, or at its next wait if it is not waiting).
    public func signal() {
        var one: UInt64 = 1
        _ = write(descriptor, &one, 8)
    }

    /// Waits until `signal()` or until `timeout` (nil: no limit) has passed; true when signalled.
    @discardableResult
    public func wait(timeout: Duration?) -> Bool {
        var fds = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
        _ = poll(&fds, 1, Self.milliseconds(timeout))
        return consume()
    }

    var pollDescriptor: pollfd { pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0) }

    /// Clears a pending signal; true if there was one.
    func consume() -> Bool {
        var count: UInt64 = 0
        return read(descriptor, &count, 8) == 8
    }

    static func milliseconds(_ timeout: Duration?) -> Int32 {
        guard let timeout else { return -1 }
        let (seconds, attoseconds) = timeout.components
        let ms = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: max(0, ms))
    }
}
