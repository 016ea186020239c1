import Foundation

/// Runs the built `offlinefs` executable (next to the test bundle) as a user would.
struct CLIRunner {
    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    let library: URL

    static var executable: URL {
        let buildFolder = Bundle.main.executableURL?.deletingLastPathComponent()
            ?? URL(fileURLWithPath: ".build/debug")
        return buildFolder.appendingPathComponent("offlinefs")
    }

    init() {
        library = FileManager.default.temporaryDirectory.appendingPathComponent("offlinefs-cli-\(UUID().uuidString)")
    }

    func removeLibrary() {
        try? FileManager.default.removeItem(at: library)
    }

    /// Runs `offlinefs <arguments>` with `OFFLINEFS_LIBRARY` pointing at this runner's library.
    @discardableResult
    func run(_ arguments: String..., environment extra: [String: String] = [:]) throws -> Output {
        try run(arguments, environment: extra)
    }

    @discardableResult
    func run(_ arguments: [String], environment extra: [String: String] = [:]) throws -> Output {
        let process = Process()
        process.executableURL = Self.executable
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["OFFLINEFS_LIBRARY"] = library.path
        environment.merge(extra) { $1 }
        process.environment = environment
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Read both pipes before waiting, so a large output cannot fill a pipe and block.
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Output(status: process.terminationStatus,
                      stdout: String(decoding: stdout, as: UTF8.self),
                      stderr: String(decoding: stderr, as: UTF8.self))
    }
}
