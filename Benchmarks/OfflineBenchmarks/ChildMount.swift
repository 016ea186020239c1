import Foundation
import OfflineFUSE
import OfflineTestSupport

/// The `offlinefs` program beside this one (release or debug, as this one was built), which
/// the benchmarks run as users do: syncs and mounts in processes of their own, so each
/// process's memory is its own.
enum OfflineFSProgram {
    static func locate(_ explicit: String?) throws -> String {
        let path = explicit ?? URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("offlinefs").path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw BenchmarkFailure("no offlinefs program at \(path): build it in the same configuration "
                                   + "(swift build -c release --product offlinefs) or pass --offlinefs PATH")
        }
        return path
    }
}

/// `offlinefs mount -f` of a library, run as a child process and unmounted on `stop`.
final class ChildMount {
    let mountpoint: String
    let process: ChildProcess.Running
    private let program: String

    /// Starts the mount; returns at once (`waitForStat` waits for it to serve).
    init(program: String, library: String, mountpoint: String) throws {
        self.program = program
        self.mountpoint = mountpoint
        try FileManager.default.createDirectory(atPath: mountpoint, withIntermediateDirectories: true)
        process = try ChildProcess.start([program, "mount", "--library", library, mountpoint, "-f"])
    }

    var pid: pid_t { process.pid }

    /// Waits until `stat` of `path` (inside the mount) answers. Before the mount is up, the
    /// same path on the folder underneath is missing; the mount answers an item's `stat`
    /// once its tree is built.
    func waitForStat(_ path: String, deadline: Double = 120) throws {
        let end = Date().addingTimeInterval(deadline)
        var info = stat()
        while stat(path, &info) != 0 {
            if process.wait(deadline: 0) {
                throw BenchmarkFailure("the mount ended before serving: \(process.result().stderr)")
            }
            guard Date() < end else { throw BenchmarkFailure("\(path) did not appear within \(Int(deadline)) s") }
            usleep(500)
        }
    }

    /// Waits until the mount's start-up work (the tree, the deferred integrity check) is
    /// done: until it used under a tenth of a core over `quiet` seconds. Not zero: an idle
    /// mount still checks the store for changes every second.
    func waitUntilIdle(quiet: Double = 2, deadline: Double = 300) throws {
        let end = Date().addingTimeInterval(deadline)
        while cpuShare(over: quiet) >= 0.1 {
            guard Date() < end else { throw BenchmarkFailure("the mount was still busy after \(Int(deadline)) s") }
        }
    }

    /// The share of one core the mount used over the next `seconds`.
    func cpuShare(over seconds: Double) -> Double {
        let before = ProcessStats(pid: pid).cpuTicks
        usleep(UInt32(seconds * 1_000_000))
        return Double(ProcessStats(pid: pid).cpuTicks - before) / Double(sysconf(Int32(_SC_CLK_TCK))) / seconds
    }

    func stop() throws {
        _ = try ChildProcess.run([program, "unmount", mountpoint], deadline: 60)
        guard process.wait(deadline: 60) else {
            process.kill(SIGKILL)
            throw BenchmarkFailure("the mount did not end after unmount")
        }
        _ = MountTable.wait(for: mountpoint, mounted: false)
    }
}

/// What `/proc/<pid>` says of a process: resident memory, CPU ticks, descriptors, threads.
struct ProcessStats {
    let pid: pid_t

    private var status: [Substring] {
        ((try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? "").split(separator: "\n")
    }

    func statusKiB(_ key: String) -> Double {
        guard let line = status.first(where: { $0.hasPrefix(key + ":") }),
              let value = Double(line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first ?? "")
        else { return 0 }
        return value
    }

    var residentMiB: Double { statusKiB("VmRSS") / 1024 }
    var peakResidentMiB: Double { statusKiB("VmHWM") / 1024 }
    var threads: Int { Int(statusKiB("Threads")) }
    var openDescriptors: Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0 }

    /// Its open descriptors and, from the same listing, how many of them are sockets
    /// (connections to origins, open or kept idle).
    var descriptorsAndSockets: (all: Int, sockets: Int) {
        let folder = "/proc/\(pid)/fd"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        let sockets = names.count { (try? FileManager.default.destinationOfSymbolicLink(atPath: folder + "/" + $0))?.hasPrefix("socket:") == true }
        return (names.count, sockets)
    }

    /// How many of its threads belong to pools that grow and shrink with the work: libdispatch's
    /// workers (their names end in "-qos" or "-qos.overcommit") and libfuse's (named like the
    /// process: they inherit the name of the main thread, which starts them; the mount's own
    /// threads name themselves).
    var pooledThreads: (dispatch: Int, fuse: Int) {
        let folder = "/proc/\(pid)/task"
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        func name(_ task: String) -> String { (try? String(contentsOfFile: folder + "/" + task + "/comm", encoding: .utf8)) ?? "" }
        let process = name(String(pid))
        let names = tasks.filter { $0 != String(pid) }.map(name)
        return (names.count { $0.hasSuffix("-qos\n") || $0.hasSuffix("-qos.overcommit\n") }, names.count { $0 == process })
    }

    /// User and system CPU time in clock ticks.
    var cpuTicks: Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return 0 }
        // Fields after the command's closing parenthesis: state is 3; utime 14 and stime 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12 else { return 0 }
        return (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0)
    }
}

enum ChildResources {
    /// The peak resident memory of the largest child waited for so far, in MiB.
    static func largestChildPeakMiB() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_CHILDREN.rawValue, &usage)
        return Double(usage.ru_maxrss) / 1024
    }
}
