/// Looks up, ahead of the read path, the `Error` conformances of failure types that the path
/// puts in `Result`s made from their mangled names. The first look-up of a type scans every
/// conformance record of the binary (~0.3 ms each in perf) while a reader waits; later ones
/// hit the runtime's cache.
public enum ErrorConformances {
    public static func lookUp(_ failures: [Any.Type]) {
        for failure in failures { _ = isError(failure) }
    }

    /// A run-time check: `T.self is any Error.Type` with a known `T` is folded at compile time.
    @_optimize(none)
    private static func isError(_ type: Any.Type) -> Bool { type is any Error.Type }
}
