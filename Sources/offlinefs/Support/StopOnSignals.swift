import Dispatch
import Foundation

/// Ends a command that runs an engine in this process (`download --wait`) on Ctrl-C, `kill`,
/// `timeout` or a service stop as a mount ends: `stop` runs (the engine ends its hook runs and
/// puts its downloads back to queued for the next engine), then the process ends as that
/// signal would have ended it, so the shell and `timeout` see the status they expect.
/// Killed outright, it would leave a hook's process running and items `downloading`.
enum StopOnSignals {
    /// Keep the sources for as long as the command runs.
    static func install(_ stop: @escaping @Sendable () -> Void) -> [any DispatchSourceSignal] {
        [SIGINT, SIGTERM, SIGHUP].map { number in
            signal(number, SIG_IGN)  // delivered to the source instead
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                FileHandle.standardError.write(Data("stopped by \(String(cString: strsignal(number))): what did not finish is queued for the next engine\n".utf8))
                stop()
                signal(number, SIG_DFL)
                kill(getpid(), number)  // not raise: this thread blocks signals
            }
            source.resume()
            return source
        }
    }
}
