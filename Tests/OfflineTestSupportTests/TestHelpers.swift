import Foundation

/// Byte equality that reports sizes rather than dumping megabytes into a failure message.
func same(_ actual: Data, _ expected: some DataProtocol) -> Bool {
    actual.count == expected.count && actual == Data(expected)  // Data == is a memcmp
}
