import Glibc

/// Why a `TestOrigin` could not start or reopen its listener.
public struct TestOriginError: Error, CustomStringConvertible, Sendable {
    /// The failing operation, e.g. `bind 127.0.0.1:8080`.
    public var operation: String
    /// The C `errno` of the failing call, 0 when none applies.
    public var code: Int32

    public init(operation: String, code: Int32) {
        self.operation = operation
        self.code = code
    }

    static func system(_ operation: String) -> TestOriginError {
        TestOriginError(operation: operation, code: errno)
    }

    public var description: String {
        code == 0 ? "TestOrigin: \(operation) failed"
            : "TestOrigin: \(operation) failed: \(String(cString: strerror(code)))"
    }
}
