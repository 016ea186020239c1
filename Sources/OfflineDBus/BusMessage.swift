import CSystemd

/// A received D-Bus message (a signal, or a method's reply), read in order as sd-bus reads it
/// ([sd_bus_message_read_basic(3)](https://www.freedesktop.org/software/systemd/man/sd_bus_message_read_basic.html)).
/// Holds a reference on the message; use it on the connection's thread.
public final class BusMessage {
    /// Containers that `enter` opens, by their D-Bus type code.
    public enum Container: UInt8 {
        case array = 0x61      // 'a'
        case variant = 0x76    // 'v'
        case dictEntry = 0x65  // 'e'
        case structure = 0x72  // 'r'
    }

    private let message: OpaquePointer

    init(_ message: OpaquePointer) {
        self.message = sd_bus_message_ref(message)
    }

    deinit { sd_bus_message_unref(message) }

    /// The error of an error reply; nil for any other message.
    public var error: BusError? {
        guard sd_bus_message_is_method_error(message, nil) > 0, let error = sd_bus_message_get_error(message) else {
            return nil
        }
        return BusError(error)
    }

    public var member: String? { sd_bus_message_get_member(message).map { String(cString: $0) } }

    /// The next argument, which must be a string (`s`).
    public func readString() throws(BusError) -> String {
        var value: UnsafePointer<CChar>?
        try readBasic("s", &value)
        return value.map { String(cString: $0) } ?? ""
    }

    /// The next argument, which must be a `u`.
    public func readUInt32() throws(BusError) -> UInt32 {
        var value: UInt32 = 0
        try readBasic("u", &value)
        return value
    }

    /// The next argument, which must be an array of strings (`as`).
    public func readStrings() throws(BusError) -> [String] {
        guard try enter(.array, "s") else { return [] }
        var strings: [String] = []
        var value: UnsafePointer<CChar>?
        while try check("sd_bus_message_read_basic", sd_bus_message_read_basic(message, CChar(UInt8(ascii: "s")), &value)) > 0 {
            strings.append(value.map { String(cString: $0) } ?? "")
        }
        try exit()
        return strings
    }

    /// Opens the next argument, a container holding `contents` (a signature such as `{sv}`
    /// for an array, `sv` for a dictionary entry, `u` for a variant). False at the end of the
    /// enclosing array: there is nothing more to open.
    public func enter(_ container: Container, _ contents: String) throws(BusError) -> Bool {
        try check("sd_bus_message_enter_container", sd_bus_message_enter_container(message, CChar(container.rawValue), contents)) > 0
    }

    /// Leaves the container `enter` opened last, skipping what was not read of it.
    public func exit() throws(BusError) {
        try check("sd_bus_message_exit_container", sd_bus_message_exit_container(message))
    }

    /// Skips the next arguments, whose signature is `signature` (e.g. `v`).
    public func skip(_ signature: String) throws(BusError) {
        try check("sd_bus_message_skip", sd_bus_message_skip(message, signature))
    }

    /// The signature of the next argument's contents when it is a variant (`u` for a
    /// variant holding a `u`); nil when the next argument is no variant or there is none.
    public func peekVariantContents() throws(BusError) -> String? {
        var type: CChar = 0
        var contents: UnsafePointer<CChar>?
        guard try check("sd_bus_message_peek_type", sd_bus_message_peek_type(message, &type, &contents)) > 0,
              UInt8(bitPattern: type) == Container.variant.rawValue else { return nil }
        return contents.map { String(cString: $0) }
    }

    private func readBasic(_ type: Unicode.Scalar, _ value: UnsafeMutableRawPointer) throws(BusError) {
        let code = sd_bus_message_read_basic(message, CChar(type.value), value)
        guard try check("sd_bus_message_read_basic", code) > 0 else {
            throw BusError(message: "sd_bus_message_read_basic: no '\(type)' left in the message")
        }
    }
}
