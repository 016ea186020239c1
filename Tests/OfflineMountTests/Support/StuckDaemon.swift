import Foundation

/// For a daemon that did not end after `kill -9`: what its threads wait on, and a way out that
/// keeps the rest of the suite from hanging on its mount.
enum StuckDaemon {
    /// Each thread's name, state and kernel stack (`/proc/<pid>/task/*`), for the test's report.
    static func threads(of pid: pid_t) -> String {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.sorted().map { tid in
            let base = "/proc/\(pid)/task/\(tid)"
            let name = (try? String(contentsOfFile: base + "/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
            let state = (try? String(contentsOfFile: base + "/status", encoding: .utf8))?
                .split(separator: "\n").first { $0.hasPrefix("State:") }.map(String.init) ?? "?"
            let stack = (try? String(contentsOfFile: base + "/stack", encoding: .utf8)) ?? "(no stack)"
            return "\(tid) \(name) \(state)\n\(stack)"
        }.joined(separator: "\n")
    }

    /// Aborts the FUSE connection of the mount at `mountpoint` (fusectl), as an administrator
    /// would: its requests then fail with `ENOTCONN`. False when it found no connection.
    @discardableResult
    static func abortConnection(of mountpoint: String) -> Bool {
        if !FileManager.default.fileExists(atPath: "/sys/fs/fuse/connections/") {
            _ = mount("fusectl", "/sys/fs/fuse/connections", "fusectl", 0, nil)
        }
        // The connection's folder is named for the minor number of the mount's device
        // (`major:minor`, the third field of /proc/self/mountinfo).
        guard let table = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8) else { return false }
        for line in table.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count > 4, String(fields[4]) == mountpoint,
                  let minor = fields[2].split(separator: ":").last else { continue }
            return (try? "1".write(toFile: "/sys/fs/fuse/connections/\(minor)/abort", atomically: false, encoding: .utf8)) != nil
        }
        return false
    }
}
