import Foundation

/// Runs the `curl` command-line tool: an independent HTTP client that checks the origin
/// speaks HTTP the way libcurl (the engine's client) expects.
struct Curl {
    struct Result {
        var exitCode: Int32
        var body: Data
        var stderr: String
    }

    /// Starts curl with `-s -S` and `arguments`; `wait()` collects the result. Output goes to
    /// temporary files so a large body never blocks on a full pipe.
    final class Running {
        let process = Process()
        let bodyURL: URL
        let errorURL: URL

        init(_ arguments: [String]) throws {
            let folder = FileManager.default.temporaryDirectory
            bodyURL = folder.appendingPathComponent("origin-curl-\(UUID().uuidString).out")
            errorURL = folder.appendingPathComponent("origin-curl-\(UUID().uuidString).err")
            _ = FileManager.default.createFile(atPath: bodyURL.path, contents: nil)
            _ = FileManager.default.createFile(atPath: errorURL.path, contents: nil)
            process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
            process.arguments = ["-s", "-S", "--noproxy", "*", "-o", bodyURL.path] + arguments
            process.standardError = try FileHandle(forWritingTo: errorURL)
            try process.run()
        }

        func wait() throws -> Result {
            process.waitUntilExit()
            defer {
                try? FileManager.default.removeItem(at: bodyURL)
                try? FileManager.default.removeItem(at: errorURL)
            }
            return Result(exitCode: process.terminationStatus, body: try Data(contentsOf: bodyURL),
                          stderr: String(decoding: try Data(contentsOf: errorURL), as: UTF8.self))
        }
    }

    static func run(_ arguments: [String]) throws -> Result {
        try Running(arguments).wait()
    }

    /// SHA-256 of `data` computed by `sha256sum`, to check the in-package hasher independently.
    static func sha256sum(_ data: Data) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("origin-sha-\(UUID().uuidString)")
        try data.write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let process = Process()
        let pipe = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        process.arguments = [url.path]
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: output, as: UTF8.self).split(separator: " ").first.map(String.init) ?? ""
    }
}
