#if canImport(Glibc)
import Glibc
#endif
import Logging

/// Logs to syslog (journald picks it up): where a daemonized mount's messages go, since its
/// stderr is `/dev/null`.
struct SyslogLogHandler: LogHandler {
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    let label: String

    init(label: String) {
        self.label = label
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let priority: Int32 = switch event.level {
        case .trace, .debug: LOG_DEBUG
        case .info: LOG_INFO
        case .notice: LOG_NOTICE
        case .warning: LOG_WARNING
        case .error: LOG_ERR
        case .critical: LOG_CRIT
        }
        // syslog(3) is variadic: go through vsyslog with a fixed "%s" format, given a C string
        // (a Swift `String` in the argument list arrives as no string at all).
        "\(label): \(event.message)".withCString { message in
            withVaList([message]) { vsyslog(LOG_DAEMON | priority, "%s", $0) }
        }
    }
}
