import OfflineStore

/// A request the engine refuses, with a sentence for the user.
public enum EngineError: Error, Sendable, CustomStringConvertible, Equatable {
    case invalidArgument(String)
    case notFound(String)

    public var description: String {
        switch self {
        case .invalidArgument(let message), .notFound(let message): message
        }
    }
}

extension EngineError {
    /// Whether `error` says the item asked about is not in the library (gone since it was
    /// listed): a front end answers "no such file" rather than an I/O error.
    public static func meansNoSuchItem(_ error: any Error) -> Bool {
        (error as? StoreError)?.code == .unknownItem
    }

    /// Whether `error` says the library's disk is full (the store could not record the
    /// change): a front end answers "no space left on device" rather than "invalid argument".
    public static func meansDiskFull(_ error: any Error) -> Bool {
        LibraryStore.isDiskFull(error)
    }
}
