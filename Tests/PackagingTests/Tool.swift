import Foundation

/// Runs command-line tools for the packaging tests, and knows where the checkout and the
/// built `offlinefs` are.
enum Tool {
    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// The checkout: this file is `Tests/PackagingTests/Tool.swift`.
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The folder `swift test` built into (it holds `offlinefs` and the test bundle).
    static var buildFolder: URL {
        Bundle.main.executableURL?.deletingLastPathComponent() ?? repository.appendingPathComponent(".build/debug")
    }

    /// Whether `name` is an executable on PATH.
    static func exists(_ name: String) -> Bool {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(name)") }
    }

    /// Runs `arguments` (the first found on PATH) in `folder`, with extra environment.
    static func run(_ arguments: [String], in folder: URL = repository, environment extra: [String: String] = [:]) throws -> Output {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.currentDirectoryURL = folder
        process.environment = ProcessInfo.processInfo.environment.merging(extra) { $1 }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Both pipes are drained before waiting, so a chatty tool cannot block on a full pipe.
        let errData = ErrorReader(err.fileHandleForReading)
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = errData.wait()
        process.waitUntilExit()
        return Output(status: process.terminationStatus,
                      stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: stderr, as: UTF8.self))
    }

    /// A fresh temporary folder.
    static func temporaryFolder(_ label: String) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("offlinefs-\(label)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// Every file and symbolic link under `folder`, as paths relative to it, sorted.
    static func files(under folder: URL) -> [String] {
        let base = folder.resolvingSymlinksInPath().path
        guard let walker = FileManager.default.enumerator(atPath: base) else { return [] }
        var found: [String] = []
        while let relative = walker.nextObject() as? String {
            let type = walker.fileAttributes?[.type] as? FileAttributeType
            if type == .typeRegular || type == .typeSymbolicLink { found.append(relative) }
        }
        return found.sorted()
    }
}

/// Reads a pipe to its end on a thread of its own.
private final class ErrorReader: @unchecked Sendable {
    // @unchecked: `data` is written once by the thread before `done` is signalled, read after.
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        let thread = Thread { [self] in
            data = handle.readDataToEndOfFile()
            done.signal()
        }
        thread.start()
    }

    func wait() -> Data {
        done.wait()
        return data
    }
}
