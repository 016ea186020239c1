import Foundation
import Testing

/// The layers of Package.swift's header hold in the sources: every module a file imports is
/// one its target declares (the compiler lets a target import what another target pulled in),
/// and the mount reaches the store and the HTTP binding only through the engine.
@Suite("Package.swift declares what each target imports")
struct LayeringTests {
    /// Modules of the toolchain and the system: no target declares them.
    static let system: Set<String> = ["Foundation", "FoundationXML", "Glibc", "Dispatch", "Synchronization", "Testing"]

    /// One target of Package.swift: its name, its source folder and what it declares.
    struct Target {
        var name: String
        var folder: String
        var dependencies: Set<String>
    }

    /// The targets as Package.swift writes them (`name:`, `path:`, the quoted names and
    /// products of `dependencies: [...]`). A reading of the text, not SwiftPM's: enough for a
    /// manifest that lists names literally, as this one does.
    static func targets() throws -> [Target] {
        let manifest = try String(contentsOf: Tool.repository.appendingPathComponent("Package.swift"), encoding: .utf8)
        let body = manifest[...]
        let starts = body.matches(of: /\.(target|executableTarget|testTarget|systemLibrary)\(/)
        return starts.indices.compactMap { index -> Target? in
            let end = index + 1 < starts.count ? starts[index + 1].range.lowerBound : body.endIndex
            let chunk = body[starts[index].range.upperBound..<end]
            guard let name = chunk.firstMatch(of: /name: "([^"]+)"/)?.1 else { return nil }
            let path = chunk.firstMatch(of: /path: "([^"]+)"/).map { String($0.1) }
                ?? (starts[index].1 == "testTarget" ? "Tests/\(name)" : "Sources/\(name)")
            var dependencies: Set<String> = []
            if let list = chunk.firstMatch(of: /dependencies: \[([^\]]*)\]/)?.1 {
                let withoutPackages = list.replacing(/package: "[^"]+"/, with: "")
                for match in withoutPackages.matches(of: /"([^"]+)"/) { dependencies.insert(String(match.1)) }
            }
            return Target(name: String(name), folder: path, dependencies: dependencies)
        }
    }

    /// The modules the Swift files under `folder` import, with the files that import each.
    static func imports(under folder: String) -> [String: [String]] {
        let root = Tool.repository.appendingPathComponent(folder)
        var found: [String: [String]] = [:]
        for file in Tool.files(under: root) where file.hasSuffix(".swift") {
            guard let text = try? String(contentsOf: root.appendingPathComponent(file), encoding: .utf8) else { continue }
            // Swift's Regex is slow: only the lines that can be imports are matched.
            for line in text.split(separator: "\n") where line.contains("import ") {
                let pattern = /^(?:@\w+ )*(?:public |internal |package |private |fileprivate )?import (?:(?:struct|class|enum|protocol|typealias|func|var|let) )?(\w+)/
                if let module = line.firstMatch(of: pattern)?.1 { found[String(module), default: []].append(file) }
            }
        }
        return found
    }

    @Test func everyImportedModuleIsADeclaredDependency() throws {
        let targets = try Self.targets()
        #expect(targets.count > 20, "Package.swift's targets were not read")
        for target in targets {
            for (module, files) in Self.imports(under: target.folder)
            where module != target.name && !Self.system.contains(module) && !target.dependencies.contains(module) {
                Issue.record("\(target.name) imports \(module) (\(files.sorted().joined(separator: ", "))) but does not declare it")
            }
        }
    }

    @Test func theMountAsksTheEngineNeverTheStoreOrHTTP() throws {
        // The kernel binding, the engine, the C shim for malloc_trim, and logging: nothing
        // below the engine (the desktop's thumbnails are the engine's `DesktopThumbnailCache`).
        let mount = try #require(try Self.targets().first { $0.name == "OfflineMount" })
        #expect(mount.dependencies == ["OfflineFUSE", "OfflineEngine", "CSystemShim", "Logging"])
        let imports = Self.imports(under: "Sources/OfflineMount")
        #expect(imports["OfflineStore"] == nil)
        #expect(imports["OfflineHTTP"] == nil)
    }
}
