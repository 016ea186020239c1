import CSystemd
import Glibc

/// A client connection to a D-Bus message bus through libsystemd's sd-bus
/// ([sd-bus(3)](https://www.freedesktop.org/software/systemd/man/sd-bus.html)).
///
/// Not thread-safe, as sd-bus is not: one thread connects, loops on `process()` and
/// `wait(wakeup:)`, and every handler runs on that thread, inside `process()`. Nothing blocks
/// on the bus: matches are added and methods called asynchronously, their answers arrive
/// through `process()`.
public final class BusConnection {
    let bus: OpaquePointer

    private init(_ bus: OpaquePointer) { self.bus = bus }

    /// Slots hold the connection, so it goes last.
    deinit { sd_bus_close_unref(bus) }

    /// The system bus, found as
    /// [sd_bus_open_system(3)](https://www.freedesktop.org/software/systemd/man/sd_bus_open_system.html)
    /// finds it: `$DBUS_SYSTEM_BUS_ADDRESS`, else `/run/dbus/system_bus_socket`.
    public static func system() throws(BusError) -> BusConnection {
        var bus: OpaquePointer?
        try check("sd_bus_open_system", sd_bus_open_system(&bus))
        guard let bus else { throw BusError(message: "sd_bus_open_system returned no bus") }
        return BusConnection(bus)
    }

    /// The bus at `address` (a D-Bus address such as `unix:path=/run/dbus/system_bus_socket`).
    public static func connect(address: String) throws(BusError) -> BusConnection {
        var made: OpaquePointer?
        try check("sd_bus_new", sd_bus_new(&made))
        guard let made else { throw BusError(message: "sd_bus_new returned no bus") }
        let connection = BusConnection(made)
        try check("sd_bus_set_address", sd_bus_set_address(made, address))
        try check("sd_bus_set_bus_client", sd_bus_set_bus_client(made, 1))
        try check("sd_bus_start", sd_bus_start(made))
        return connection
    }

    /// Calls `handler` with every message matching `rule` (a D-Bus match rule such as
    /// `type='signal',interface='org.freedesktop.DBus',member='NameOwnerChanged'`) until the
    /// returned slot is dropped. The bus is asked without waiting for its answer; a rule it
    /// refuses ends the connection (sd-bus's default).
    public func addMatch(_ rule: String, _ handler: @escaping (BusMessage) -> Void) throws(BusError) -> BusSlot {
        let box = Handler(handler)
        var slot: OpaquePointer?
        try check("sd_bus_add_match_async",
                  sd_bus_add_match_async(bus, &slot, rule, dispatchToHandler, nil, Unmanaged.passUnretained(box).toOpaque()))
        return BusSlot(slot, handler: box, connection: self)
    }

    /// Calls a method whose arguments are all strings, without waiting: `reply` gets the
    /// answer, an error reply, or a timeout error, unless the returned slot is dropped first.
    /// - Parameter autoStart: false: a service that is not running is not started for this call.
    public func call(_ destination: String, _ path: String, _ interface: String, _ member: String,
                     arguments: [String] = [], autoStart: Bool = true, timeout: Duration,
                     reply: @escaping (Result<BusMessage, BusError>) -> Void) throws(BusError) -> BusSlot {
        var made: OpaquePointer?
        try check("sd_bus_message_new_method_call",
                  sd_bus_message_new_method_call(bus, &made, destination, path, interface, member))
        guard let message = made else { throw BusError(message: "sd_bus_message_new_method_call returned no message") }
        defer { sd_bus_message_unref(message) }
        for argument in arguments {
            try check("sd_bus_message_append_basic",
                      argument.withCString { sd_bus_message_append_basic(message, CChar(UInt8(ascii: "s")), $0) })
        }
        try check("sd_bus_message_set_auto_start", sd_bus_message_set_auto_start(message, autoStart ? 1 : 0))
        let box = Handler { answer in
            if let error = answer.error { reply(.failure(error)) } else { reply(.success(answer)) }
        }
        let (seconds, attoseconds) = timeout.components
        let usec = UInt64(max(1, seconds * 1_000_000 + attoseconds / 1_000_000_000_000))
        var slot: OpaquePointer?
        try check("sd_bus_call_async",
                  sd_bus_call_async(bus, &slot, message, dispatchToHandler, Unmanaged.passUnretained(box).toOpaque(), usec))
        return BusSlot(slot, handler: box, connection: self)
    }

    /// Handles one thing that has arrived or timed out (each runs its handler). True when it
    /// did something, so call it again; false when nothing is left until `wait`.
    /// - Throws: when the connection is lost or was refused.
    public func process() throws(BusError) -> Bool {
        let code = sd_bus_process(bus, nil)
        guard code >= 0 else { throw BusError(call: "sd_bus_process", returned: code) }
        guard sd_bus_is_open(bus) > 0 else {
            throw BusError(message: "the bus closed the connection", errno: ECONNRESET)
        }
        return code > 0
    }

    /// Waits until there is something to process, the earliest call times out, or `wakeup`
    /// is signalled (as `sd_bus_wait(3)` does, with one more descriptor).
    public func wait(wakeup: BusWakeup) throws(BusError) {
        let fd = try check("sd_bus_get_fd", sd_bus_get_fd(bus))
        let events = try check("sd_bus_get_events", sd_bus_get_events(bus))
        var deadline: UInt64 = 0
        try check("sd_bus_get_timeout", sd_bus_get_timeout(bus, &deadline))
        var fds = [pollfd(fd: fd, events: Int16(truncatingIfNeeded: events), revents: 0), wakeup.pollDescriptor]
        if poll(&fds, 2, Self.pollTimeout(until: deadline)) < 0, errno != EINTR {
            throw BusError(call: "poll", returned: -errno)
        }
        _ = wakeup.consume()
    }

    /// Milliseconds from now until `deadline` (µs of CLOCK_MONOTONIC, UInt64.max: none).
    private static func pollTimeout(until deadline: UInt64) -> Int32 {
        guard deadline != UInt64.max else { return -1 }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let nowUsec = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
        guard deadline > nowUsec else { return 0 }
        return Int32(clamping: (deadline - nowUsec + 999) / 1000)
    }
}

/// A match or a pending call: dropping it removes the match or forgets the reply.
public final class BusSlot {
    private let slot: OpaquePointer?
    /// The handler sd-bus holds a pointer to, kept alive as long as the slot.
    private let handler: Handler
    /// The bus outlives its slots.
    private let connection: BusConnection

    fileprivate init(_ slot: OpaquePointer?, handler: Handler, connection: BusConnection) {
        self.slot = slot
        self.handler = handler
        self.connection = connection
    }

    deinit { sd_bus_slot_unref(slot) }
}

/// A Swift closure behind an sd-bus callback's `userdata`.
private final class Handler {
    let body: (BusMessage) -> Void
    init(_ body: @escaping (BusMessage) -> Void) { self.body = body }
}

private func dispatchToHandler(_ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?,
                               _ error: UnsafeMutablePointer<sd_bus_error>?) -> Int32 {
    guard let message, let userdata else { return 0 }
    let handler = Unmanaged<Handler>.fromOpaque(userdata).takeUnretainedValue()
    handler.body(BusMessage(message))
    return 0
}
