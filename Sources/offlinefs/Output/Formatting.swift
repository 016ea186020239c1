import CSystemShim
import Foundation

func formatDate(_ date: Date) -> String {
    date.formatted(.iso8601)
}

/// Pretty, key-sorted JSON on stdout, dates as ISO-8601.
func printJSON<T: Encodable>(_ value: T) throws {
    try writeStandardOutput(Array(try makeJSONEncoder().encode(value)) + Array("\n".utf8))
}

/// Writes `bytes` to standard output, after what `print` holds; a failure (a full disk) is
/// an error the command ends with, where `FileHandle.write` stops the program with a trap.
func writeStandardOutput(_ bytes: [UInt8]) throws {
    try OutputError.checkPrinted()
    var rest = bytes[...]
    while !rest.isEmpty {
        let written = rest.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
        if written < 0 && errno == EINTR { continue }
        guard written > 0 else { throw OutputError(code: errno) }
        rest = rest.dropFirst(written)
    }
}

/// Standard output could not take the output (`ls --json > /dev/full`).
struct OutputError: Error, CustomStringConvertible {
    var code: Int32
    var description: String { "cannot write the output: \(String(cString: strerror(code)))" }

    /// After a command ran: what `print` buffered goes out now, so a failure to write it
    /// ends the command with status 1 instead of a truncated file and status 0.
    static func checkPrinted() throws {
        errno = 0
        guard csystem_standard_output_failed() != 0 else { return }
        throw OutputError(code: errno == 0 ? EIO : errno)
    }
}

private func makeJSONEncoder() -> JSONEncoder {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    encoder.dateEncodingStrategy = .iso8601
    return encoder
}

/// A JSON array printed an element at a time, byte for byte as `printJSON` prints the whole
/// array, so a listing of a million items never holds them all (`ls --json`).
struct JSONArrayPrinter {
    private let encoder = makeJSONEncoder()
    private var buffer: [UInt8] = Array("[\n".utf8)
    private var count = 0

    /// Appends `value`, indented one level as the encoder nests an array's elements.
    mutating func add<T: Encodable>(_ value: T) throws {
        let data = try encoder.encode(value)
        if count > 0 { buffer += Array(",\n".utf8) }
        count += 1
        // Every line gets two spaces but an empty one (the inside of an empty array):
        // newlines occur only between tokens, since strings escape theirs.
        var lineStart = true
        for byte in data {
            if lineStart && byte != UInt8(ascii: "\n") { buffer += [UInt8(ascii: " "), UInt8(ascii: " ")] }
            buffer.append(byte)
            lineStart = byte == UInt8(ascii: "\n")
        }
        if buffer.count >= 1 << 16 { try flush() }
    }

    /// Closes the array (an empty one prints as the encoder's `[\n\n]`).
    mutating func finish() throws {
        buffer += Array("\n]\n".utf8)
        try flush()
    }

    private mutating func flush() throws {
        try writeStandardOutput(buffer)
        buffer.removeAll(keepingCapacity: true)
    }
}
