import Glibc

/// The process's open-file limit (`RLIMIT_NOFILE`).
enum OpenFileLimit {
    /// Raises the soft limit to the hard one, as long-running daemons do: a login session's
    /// 1,024 is meant for programs that use `select`, which the mount does not. The mount keeps
    /// its own count bounded anyway (the engine's `CacheDescriptors`); the headroom is for
    /// the files programs hold open on it. Returns the soft limit before and after.
    static func raiseToHard() -> (before: UInt, now: UInt)? {
        var limit = rlimit()
        let resource = Int32(RLIMIT_NOFILE.rawValue)
        guard getrlimit(resource, &limit) == 0 else { return nil }
        let before = UInt(limit.rlim_cur)
        guard limit.rlim_cur < limit.rlim_max else { return (before, before) }
        limit.rlim_cur = limit.rlim_max
        guard setrlimit(resource, &limit) == 0 else { return (before, before) }
        return (before, UInt(limit.rlim_cur))
    }
}
