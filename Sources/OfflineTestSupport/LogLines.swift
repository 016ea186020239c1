public import Logging
import Synchronization

/// A log handler that keeps each message, for tests that check what a component logs.
public struct LogLines: LogHandler {
    private let box = Box()
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .trace
    public var messages: [String] { box.lines.withLock { $0 } }

    public init() {}

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String,
                    file: String, function: String, line: UInt) {
        box.lines.withLock { $0.append(message.description) }
    }

    private final class Box: Sendable {
        let lines = Mutex<[String]>([])
    }
}
