import CFuseShim

/// Kernel capabilities a filesystem can ask for in `initialize` (`FUSE_CAP_*`).
public struct Capabilities: OptionSet, Hashable, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let asyncRead = Capabilities(rawValue: UInt32(FUSE_CAP_ASYNC_READ))
    public static let atomicOpenTruncate = Capabilities(rawValue: UInt32(FUSE_CAP_ATOMIC_O_TRUNC))
    public static let exportSupport = Capabilities(rawValue: UInt32(FUSE_CAP_EXPORT_SUPPORT))
    /// Replies may be spliced into `/dev/fuse` (`fuse_reply_data` from an fd without copying).
    public static let spliceWrite = Capabilities(rawValue: UInt32(FUSE_CAP_SPLICE_WRITE))
    public static let spliceMove = Capabilities(rawValue: UInt32(FUSE_CAP_SPLICE_MOVE))
    public static let spliceRead = Capabilities(rawValue: UInt32(FUSE_CAP_SPLICE_READ))
    public static let autoInvalidateData = Capabilities(rawValue: UInt32(FUSE_CAP_AUTO_INVAL_DATA))
    /// Directory listings carry attributes (`readdirplus`): `ls -l` needs no LOOKUP per entry.
    public static let readdirplus = Capabilities(rawValue: UInt32(FUSE_CAP_READDIRPLUS))
    /// The kernel chooses between `readdir` and `readdirplus` by how the listing is used.
    public static let readdirplusAuto = Capabilities(rawValue: UInt32(FUSE_CAP_READDIRPLUS_AUTO))
    public static let asyncDirectIO = Capabilities(rawValue: UInt32(FUSE_CAP_ASYNC_DIO))
    public static let writebackCache = Capabilities(rawValue: UInt32(FUSE_CAP_WRITEBACK_CACHE))
    public static let parallelDirectoryOperations = Capabilities(rawValue: UInt32(FUSE_CAP_PARALLEL_DIROPS))
    public static let cacheSymlinks = Capabilities(rawValue: UInt32(FUSE_CAP_CACHE_SYMLINKS))
    /// Page cache is invalidated only when the filesystem says so (`notifyInvalidateInode`).
    public static let explicitInvalidateData = Capabilities(rawValue: UInt32(FUSE_CAP_EXPLICIT_INVAL_DATA))
}

/// The connection parameters negotiated at INIT (`struct fuse_conn_info`), handed to
/// `FileSystemOperations.initialize(_:)` to read and change.
public struct ConnectionInfo: Hashable, Sendable {
    /// The protocol version the kernel speaks.
    public let protocolMajor: UInt32
    public let protocolMinor: UInt32
    /// What the kernel supports (read-only).
    public let capable: Capabilities
    /// What the filesystem asks for; only bits in `capable` take effect.
    public var want: Capabilities
    /// Largest read request in bytes (0: no limit). Must equal `-o max_read` when that is given;
    /// the session sets it from the options before `initialize` runs.
    public var maxRead: UInt32
    /// Upper bound on kernel read-ahead in bytes: it can only lower the kernel's default.
    public var maxReadahead: UInt32
    /// Largest write request in bytes.
    public var maxWrite: UInt32
    /// Requests the kernel keeps in flight in the background (read-ahead, async reads).
    public var maxBackground: UInt32
    public var congestionThreshold: UInt32
    /// Timestamp granularity in nanoseconds (1 = nanosecond times).
    public var timeGranularity: UInt32
    /// Kernel features beyond `capable` the kernel offers (read-only).
    public let kernelOffers: KernelFeatures
    /// Those the filesystem asks for; only features in `kernelOffers` take effect.
    public var kernelFeatures: KernelFeatures = []

    init(_ conn: fuse_conn_info, kernelOffers: KernelFeatures = []) {
        self.kernelOffers = kernelOffers
        protocolMajor = conn.proto_major
        protocolMinor = conn.proto_minor
        capable = Capabilities(rawValue: conn.capable)
        want = Capabilities(rawValue: conn.want)
        maxRead = conn.max_read
        maxReadahead = conn.max_readahead
        maxWrite = conn.max_write
        maxBackground = conn.max_background
        congestionThreshold = conn.congestion_threshold
        timeGranularity = conn.time_gran
    }

    /// Adds `capabilities` to `want` where the kernel offers them.
    public mutating func enable(_ capabilities: Capabilities) {
        want.formUnion(capabilities.intersection(capable))
    }

    /// Removes `capabilities` from `want`.
    public mutating func disable(_ capabilities: Capabilities) {
        want.subtract(capabilities)
    }

    func apply(to conn: inout fuse_conn_info) {
        conn.want = want.intersection(capable).rawValue
        conn.max_read = maxRead
        conn.max_readahead = maxReadahead
        conn.max_write = maxWrite
        conn.max_background = maxBackground
        conn.congestion_threshold = congestionThreshold
        conn.time_gran = timeGranularity
    }
}
