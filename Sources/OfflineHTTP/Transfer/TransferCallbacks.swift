import Synchronization

/// What a consumer did with a chunk of body bytes (`TransferCallbacks.body`).
public enum BodyReply: Sendable, Equatable {
    /// Took all of them; more are welcome.
    case more
    /// The transfer must stop (`complete` then gets `.cancelled`; the consumer knows whether
    /// that was a success).
    case stop
    /// Took the first `taken` bytes and wants no more for now: the loop keeps the rest and
    /// stops reading the connection (the origin is held back by TCP) until
    /// `TransferLoop.resume`, which hands the kept bytes over first.
    case pause(taken: Int)
}

/// What a `TransferLoop` calls while one transfer runs. Every callback runs on the loop's
/// thread, in order: `head` once (before any body byte, or at the end for an empty body),
/// `body` for each chunk, `complete` exactly once. Callbacks must not block: every other
/// transfer waits while one runs.
public struct TransferCallbacks: Sendable {
    /// The final response's status and headers (after redirects). Returning false refuses
    /// the response: the transfer stops and `complete` gets a `.cancelled` error.
    public var head: @Sendable (_ status: Int, _ headers: HTTPHeaders) -> Bool
    /// A chunk of body bytes, valid only during the call.
    public var body: @Sendable (_ bytes: UnsafeRawBufferPointer) -> BodyReply
    /// The end: nil when the exchange finished normally (any status), else why it did not.
    public var complete: @Sendable (_ error: HTTPError?) -> Void

    public init(
        head: @escaping @Sendable (_ status: Int, _ headers: HTTPHeaders) -> Bool = { _, _ in true },
        body: @escaping @Sendable (_ bytes: UnsafeRawBufferPointer) -> BodyReply,
        complete: @escaping @Sendable (_ error: HTTPError?) -> Void
    ) {
        self.head = head
        self.body = body
        self.complete = complete
    }
}

/// One transfer started on a `TransferLoop`: the key to cancel it and its live counters,
/// readable from any thread (progress bars, speed).
public final class TransferHandle: Sendable, Hashable {
    public let id: UInt64
    private let received = Atomic<Int64>(0)
    private let expected = Atomic<Int64>(-1)
    private let waitedFor = Atomic<Bool>(true)
    private let held = Atomic<Bool>(false)

    init(id: UInt64) { self.id = id }

    /// Body bytes received so far.
    public var bytesReceived: Int64 { received.load(ordering: .relaxed) }
    /// The body length the response announced (`Content-Length`), when it did.
    public var bytesExpected: Int64? {
        let value = expected.load(ordering: .relaxed)
        return value >= 0 ? value : nil
    }

    /// Whether someone waits for its bytes now (at first, yes). While a transfer someone waits
    /// for receives, the loop holds the others back, so a download gives a slow link to a
    /// reader. A change counts from the loop's next turn.
    public var isWaitedFor: Bool {
        get { waitedFor.load(ordering: .relaxed) }
        set { waitedFor.store(newValue, ordering: .relaxed) }
    }
    /// The loop held it back at least once: an origin may have closed its idle connection meanwhile.
    public var wasHeld: Bool { held.load(ordering: .relaxed) }

    func noteHeld() { held.store(true, ordering: .relaxed) }
    func add(_ count: Int) { received.add(Int64(count), ordering: .relaxed) }
    func setExpected(_ count: Int64?) { expected.store(count ?? -1, ordering: .relaxed) }

    public static func == (lhs: TransferHandle, rhs: TransferHandle) -> Bool { lhs.id == rhs.id }
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
}
