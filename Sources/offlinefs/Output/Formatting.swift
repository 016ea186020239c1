import Foundation

func formatDate(_ date: Date) -> String {
    date.formatted(.iso8601)
}

/// Pretty, key-sorted JSON on stdout, dates as ISO-8601.
func printJSON<T: Encodable>(_ value: T) throws {
    let data = try makeJSONEncoder().encode(value)
    FileHandle.standardOutput.write(data)
    FileHandle.standardOutput.write(Data("\n".utf8))
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
        if buffer.count >= 1 << 16 { flush() }
    }

    /// Closes the array (an empty one prints as the encoder's `[\n\n]`).
    mutating func finish() {
        buffer += Array("\n]\n".utf8)
        flush()
    }

    private mutating func flush() {
        FileHandle.standardOutput.write(Data(buffer))
        buffer.removeAll(keepingCapacity: true)
    }
}
