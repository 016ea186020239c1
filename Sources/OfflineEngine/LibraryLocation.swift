public import Foundation

/// Where a library lives: `--library DIR`, else `$OFFLINEFS_LIBRARY`, else
/// `$XDG_DATA_HOME/offlinefs` (`~/.local/share/offlinefs`).
public enum LibraryLocation {
    public static func resolve(explicit: String?, environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let explicit, !explicit.isEmpty { return URL(fileURLWithPath: explicit) }
        if let fromEnvironment = environment["OFFLINEFS_LIBRARY"], !fromEnvironment.isEmpty {
            return URL(fileURLWithPath: fromEnvironment)
        }
        let dataHome = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.local/share")
        return URL(fileURLWithPath: dataHome).appendingPathComponent("offlinefs")
    }
}
