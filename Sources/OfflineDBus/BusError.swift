import CSystemd
import Glibc

/// Why a bus operation failed: a D-Bus error reply (with its name, such as
/// `org.freedesktop.DBus.Error.ServiceUnknown`) or a failed sd-bus call (with its errno).
public struct BusError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The D-Bus error name of an error reply; nil for a local failure.
    public var name: String?
    public var message: String
    /// The C error of a failed sd-bus call, positive (`ENOENT`, not `-ENOENT`).
    public var errno: Int32?

    public init(name: String? = nil, message: String, errno: Int32? = nil) {
        self.name = name
        self.message = message
        self.errno = errno
    }

    /// An sd-bus call's negative return value, as the error it stands for.
    init(call: String, returned code: Int32) {
        let number = -code
        self.init(message: "\(call): \(String(cString: strerror(number)))", errno: number)
    }

    /// The error carried by an `sd_bus_error` (an error reply or a local failure).
    init(_ error: UnsafePointer<sd_bus_error>, errno: Int32? = nil) {
        let name = error.pointee.name.map { String(cString: $0) }
        let message = error.pointee.message.map { String(cString: $0) } ?? name ?? "unknown bus error"
        self.init(name: name, message: message, errno: errno)
    }

    public var description: String {
        if let name { return "\(name): \(message)" }
        return message
    }
}

/// Runs an sd-bus call that returns a negative errno on failure.
@discardableResult
func check(_ call: String, _ code: Int32) throws(BusError) -> Int32 {
    guard code >= 0 else { throw BusError(call: call, returned: code) }
    return code
}
