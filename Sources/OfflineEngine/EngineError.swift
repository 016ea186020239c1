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
