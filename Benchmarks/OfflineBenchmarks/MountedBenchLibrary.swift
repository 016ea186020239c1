import Foundation
import OfflineTestSupport

/// A library of `items` generated catalog items whose media the origin serves, synced with
/// the cache capped (`cache-limit 256M`, so eviction runs too) and mounted by the `offlinefs`
/// program; ready once an item file's `stat` answers.
struct MountedBenchLibrary {
    let catalog: BenchCatalog
    let mount: ChildMount
    let mountpoint: String
    let library: String

    init(items: Int, program: String, base: URL, origin: TestOrigin) throws {
        library = base.appendingPathComponent("library").path
        mountpoint = base.appendingPathComponent("mnt").path
        catalog = try BenchCatalog(items: items, folder: base.appendingPathComponent("catalog"), origin: origin)
        BenchCatalog.serveMedia(0..<items, on: origin)
        for command in [["source", "add", "--library", library, "bench", catalog.feedURL],
                        ["set", "--library", library, "cache-limit", "256M"],
                        ["sync", "--library", library]] {
            let result = try ChildProcess.run([program] + command, deadline: 600)
            guard result.status == 0 else { throw BenchmarkFailure("\(command.joined(separator: " ")): \(result.stderr)") }
        }
        mount = try ChildMount(program: program, library: library, mountpoint: mountpoint)
        do {
            try mount.waitForStat(mountpoint + "/sources/bench/" + BenchCatalog.fileName(items - 1))
        } catch {
            try? mount.stop()
            throw error
        }
    }
}
