import Testing

/// Every suite that mounts runs under this one, one test at a time: tests with time bounds
/// (EIO within the read timeout, the release after kill -9) must not share 2 cores with a
/// 100,000-item listing.
@Suite(.serialized) enum RealMounts {}
