/// `mount -t fuse.offlinefs <library> <mountpoint>` and `/etc/fstab` lines: mount(8) runs
/// `/sbin/mount.fuse.offlinefs <library> <mountpoint> [-sfnv] [-o options] [-t type]`
/// (`mount-helpers/mount.offlinefs`, which calls `offlinefs mount-helper`). These pure
/// functions turn that into `offlinefs mount` arguments.
public enum MountHelper {
    /// What mount(8) asked for.
    public struct Request: Equatable, Sendable {
        public var library: String
        public var mountpoint: String
        /// The options for `offlinefs mount -o`, already converted.
        public var options: [String]
        /// `-f`: "fake", do everything but mount.
        public var fake = false
        public var verbose = false

        public init(library: String, mountpoint: String, options: [String], fake: Bool = false, verbose: Bool = false) {
            self.library = library
            self.mountpoint = mountpoint
            self.options = options
            self.fake = fake
            self.verbose = verbose
        }
    }

    public struct UsageError: Error, Equatable, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// fstab and mount(8) options that only mean something to mount(8) or systemd, never to
    /// the filesystem: dropped (`rw` and `defaults` too: the defaults; `ro` is passed on).
    static let dropped: Set<String> = ["user", "users", "nouser", "owner", "group", "nofail", "auto", "noauto", "_netdev",
                                       "defaults", "rw"]

    /// Converts an `-o` list: drops mount(8)-only options (`user`, `nofail`, `auto`,
    /// `noauto`, `_netdev`, `x-*`, `comment=`…), passes the rest in order.
    public static func convert(_ options: String) -> [String] {
        options.split(separator: ",").map(String.init).filter { option in
            let name = option.split(separator: "=", maxSplits: 1).first.map(String.init) ?? option
            return !dropped.contains(name) && !name.hasPrefix("x-") && name != "comment"
        }
    }

    /// Parses the helper's arguments (mount(8)'s "EXTERNAL HELPERS" syntax).
    public static func parse(_ arguments: [String]) throws(UsageError) -> Request {
        var positional: [String] = []
        var options: [String] = []
        var fake = false, verbose = false
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            switch argument {
            case "-o", "-t", "-N":
                guard index < arguments.count else { throw UsageError(description: "\(argument) needs a value") }
                if argument == "-o" { options += convert(arguments[index]) }
                index += 1
            case _ where argument.hasPrefix("-o") && argument.count > 2:
                options += convert(String(argument.dropFirst(2)))
            case _ where argument.hasPrefix("-") && argument.count > 1:
                for flag in argument.dropFirst() {
                    switch flag {
                    case "f": fake = true
                    case "v": verbose = true
                    case "s", "n": break  // sloppy, no mtab: nothing to do
                    default: throw UsageError(description: "unknown option -\(flag)")
                    }
                }
            default:
                positional.append(argument)
            }
        }
        guard positional.count == 2 else {
            throw UsageError(description: "usage: mount.fuse.offlinefs <library> <mountpoint> [-sfnv] [-o options]")
        }
        return Request(library: positional[0], mountpoint: positional[1], options: options, fake: fake, verbose: verbose)
    }

    /// The `offlinefs` arguments that serve the request (daemonizing: no `-f`).
    public static func mountArguments(_ request: Request) -> [String] {
        var arguments = ["mount", request.mountpoint, "--library", request.library]
        if !request.options.isEmpty { arguments += ["-o", request.options.joined(separator: ",")] }
        return arguments
    }
}
