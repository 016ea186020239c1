public import OfflineEngine

/// The `-o` options of `offlinefs mount`, split into offlinefs's own settings and the options
/// handed to libfuse.
///
/// Always on: `default_permissions` (the kernel checks modes and owners, so a normal user's
/// `rm` and `setfattr` reach the filesystem, which then decides), `nosuid`, `nodev`,
/// `fsname=offlinefs`, `subtype=offlinefs`. `allow_other` only when asked (it needs
/// `user_allow_other` in `/etc/fuse.conf` for a non-root user). `auto_unmount` is on unless
/// `noauto_unmount` is given: a `kill -9` of the daemon then releases the mount instead of
/// leaving "Transport endpoint is not connected".
public struct MountOptions: Hashable, Sendable {
    /// How long a read waits for missing bytes before failing with `EIO` (`read-timeout=30s`).
    public var readTimeout: Duration = .seconds(30)
    /// How long a player's, transcoder's or copier's read rides out an origin out of reach
    /// (`outage-timeout=2m`): longer than mpv's 60 s on a URL, so a minute without a link
    /// (a tunnel, a router's restart) stalls a playback instead of ending it.
    public var outageTimeout: Duration = .seconds(120)
    /// The fastest players are taken to play (`playback-speed=1`): their reads count as
    /// played no faster than this many seconds of media a second (docs/playback.md).
    public var playbackSpeed: Double = 1
    /// How often the tree is checked against the store (`refresh=1s`).
    public var refreshInterval: Duration = .seconds(1)
    /// Seconds the kernel may cache names and attributes (`cache-timeout=60s`). Every change
    /// to them is notified (`TreeDiff`), so the time only bounds what a lost notification
    /// would hide; a short one makes an `open` after a pause cost a lookup and, with
    /// `default_permissions`, a `getattr` per folder on its path.
    /// Sizes the tree does not hold are kept a second at most (`OfflineFileSystem.attributeTimeout`).
    public var cacheTimeout: Double = 60
    public var allowOther = false
    public var autoUnmount = true
    /// `ro`: the kernel refuses every change (control writes, `rm`, `setfattr`) with `EROFS`;
    /// reads, listings and attributes work as ever.
    public var readOnly = false
    /// libfuse's `debug`: every request logged on stderr.
    public var debug = false
    /// Options passed to libfuse as given (`max_read=N`, …); libfuse rejects unknown ones.
    public var passThrough: [String] = []
    /// Which programs are players, scanners and copiers: `ProgramClasses.builtIn`, with each
    /// `reader_class=<program>:<class>` option on top.
    public var programClasses = ProgramClasses.standard

    public init() {}

    /// What went wrong in an `-o` list, with a sentence for the user.
    public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// Parses comma-separated option lists (each `-o` argument is one list).
    public static func parse(_ lists: [String]) throws(ParseError) -> MountOptions {
        var options = MountOptions()
        var classOverrides: [String] = []
        for option in lists.flatMap({ $0.split(separator: ",", omittingEmptySubsequences: true) }) {
            let parts = option.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0]).trimmed
            let value = parts.count > 1 ? String(parts[1]).trimmed : nil
            switch name {
            case "read-timeout", "read_timeout":
                options.readTimeout = try duration(name, value)
            case "playback-speed", "playback_speed":
                guard let value, let speed = Double(value), speed > 0, speed.isFinite else {
                    throw ParseError(description: "playback-speed takes a number greater than 0 (how fast players play at most, 1 = real time)")
                }
                options.playbackSpeed = speed
            case "outage-timeout", "outage_timeout":
                options.outageTimeout = try duration(name, value)
            case "refresh":
                options.refreshInterval = try duration(name, value)
            case "cache-timeout", "cache_timeout":
                let interval = try duration(name, value)
                options.cacheTimeout = Double(interval.components.seconds) + Double(interval.components.attoseconds) / 1e18
            case "allow_other":
                options.allowOther = true
            case "auto_unmount":
                options.autoUnmount = true
            case "noauto_unmount":
                options.autoUnmount = false
            case "debug":
                options.debug = true
            case "reader_class", "reader-class":
                classOverrides.append(value ?? "")
                do { options.programClasses = try ProgramClasses(overrides: classOverrides.joined(separator: ",")) } catch {
                    throw ParseError(description: "mount option '\(option)': \(error)")
                }
            case "ro":
                options.readOnly = true
            case "rw":
                options.readOnly = false
            // Fixed by offlinefs: repeating them is harmless, changing them is refused.
            case "default_permissions", "nosuid", "nodev":
                continue
            case "fsname", "subtype":
                throw ParseError(description: "mount option '\(option)' is not allowed: offlinefs sets it")
            case "suid", "dev":
                throw ParseError(description: "mount option '\(option)' is not allowed: offlinefs sets no\(option)")
            case "allow_root":
                throw ParseError(description: "mount option 'allow_root' is not supported: use allow_other (with default_permissions, which offlinefs sets, modes still decide)")
            default:
                options.passThrough.append(String(option))
            }
        }
        return options
    }

    /// The largest read request unless `-o max_read=N` says otherwise: 960 KiB. A reply is
    /// spliced from the cache file only when it fits libfuse's pipe (1 MiB, the system's
    /// `pipe-max-size`, less libfuse's margin of a few pages); a 1 MiB reply would be copied
    /// twice through a fresh buffer instead.
    public static let defaultMaxRead = 960 << 10

    /// The largest read request the kernel will send.
    public var maxRead: Int {
        passThrough.last { $0.hasPrefix("max_read=") }.flatMap { Int($0.dropFirst("max_read=".count)) } ?? Self.defaultMaxRead
    }

    /// The option list for `FUSESession`.
    public var fuseOptions: [String] {
        var list = ["default_permissions", "nosuid", "nodev", "fsname=offlinefs", "subtype=offlinefs"]
        if allowOther { list.append("allow_other") }
        if readOnly { list.append("ro") }
        if autoUnmount { list.append("auto_unmount") }
        if debug { list.append("debug") }
        if !passThrough.contains(where: { $0.hasPrefix("max_read=") }) { list.append("max_read=\(Self.defaultMaxRead)") }
        return list + passThrough
    }

    /// `30`, `30s`, `500ms`, `2m`; more than 0.
    static func duration(_ name: String, _ value: String?) throws(ParseError) -> Duration {
        guard let value, !value.isEmpty else { throw ParseError(description: "mount option '\(name)' needs a value, e.g. \(name)=30s") }
        let units: [(suffix: String, seconds: Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("", 1)]
        for unit in units where value.hasSuffix(unit.suffix) {
            guard let number = Double(value.dropLast(unit.suffix.count)), number > 0, number.isFinite,
                  number * unit.seconds <= 86_400 else { continue }
            return .milliseconds(Int64((number * unit.seconds * 1000).rounded()))
        }
        throw ParseError(description: "mount option '\(name)=\(value)': expected a duration such as 30s, 500ms or 2m")
    }
}

extension String {
    fileprivate var trimmed: String {
        var sub = Substring(self)
        while sub.first == " " { sub = sub.dropFirst() }
        while sub.last == " " { sub = sub.dropLast() }
        return String(sub)
    }
}
