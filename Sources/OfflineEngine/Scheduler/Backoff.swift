public import Foundation

/// Exponential back-off with jitter for retries (DESIGN §5): the n-th retry waits
/// `base · 2^(n-1)`, capped, times a random factor in [1 - jitter, 1] so that many items
/// failing together do not retry together.
public struct Backoff: Sendable {
    public var base: TimeInterval
    public var cap: TimeInterval
    public var jitter: Double

    public init(base: TimeInterval = 5, cap: TimeInterval = 600, jitter: Double = 0.5) {
        self.base = base
        self.cap = cap
        self.jitter = min(1, max(0, jitter))
    }

    /// The wait before retry number `attempt` (1 for the first retry); `random` is in [0, 1).
    public func delay(attempt: Int, random: Double) -> TimeInterval {
        let exponent = Double(max(0, min(attempt - 1, 30)))
        let plain = min(cap, base * pow(2, exponent))
        return plain * (1 - jitter * min(max(random, 0), 1))
    }
}

/// A small seedable generator, so tests get the same jitter every run.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
