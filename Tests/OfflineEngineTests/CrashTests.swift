import Foundation
import OfflineEngine
import OfflineStore
import OfflineTestSupport
import Testing

/// HARDENING 11: `offlinefs download --wait` in a child process, SIGKILLed at seeded random
/// moments while three files trickle in. After every kill the store is sound and claims only
/// bytes that are on disk (and are the origin's); after the last, every file completes with
/// its checksum, resuming from what was committed.
@Suite struct CrashTests {
    static let kills = 55
    static let seed: UInt64 = 0x0FF1_1AE5

    /// The `offlinefs` executable, built next to the test bundle.
    static var executable: String {
        let own = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        return URL(fileURLWithPath: own).deletingLastPathComponent().appendingPathComponent("offlinefs").path
    }

    @Test(.timeLimit(.minutes(1)))
    func killedDownloadsResumeAndComplete() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.executable), "offlinefs not built at \(Self.executable)")
        let origin = try TestOrigin()
        defer { origin.stop() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("offlinefs-crash-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }

        // Given a library with three 8 MiB items served at 512 KiB/s per connection
        let sizes: [Int64] = [8 << 20, 8 << 20, 10 << 20]
        let names = sizes.indices.map { "f\($0).bin" }
        var expected: [Data] = []
        var itemIDs: [Int64] = []
        do {
            let store = try LibraryStore.open(folder: folder)
            let source = try store.addSource(name: "src", feedURL: origin.url("/feed.json"))
            var entries: [CatalogEntry] = []
            for (index, name) in names.enumerated() {
                let bytes = GeneratedBytes(size: sizes[index], seed: UInt64(100 + index)).bytes()
                expected.append(bytes)
                origin.serve("/\(name)", .generated(size: sizes[index], seed: UInt64(100 + index)))
                entries.append(CatalogEntry(contentID: name, title: name, type: .file, mediaURL: origin.url("/\(name)"),
                                            size: sizes[index], sha256: bytes.withUnsafeBytes { SHA256Digest.hex(of: $0) }))
            }
            _ = try store.mergeCatalog(sourceID: source.id, title: nil, entries: entries, isComplete: true, now: Date())
            itemIDs = try names.map { try #require(try store.item(source: "src", contentID: $0)).id }
            try store.close()
        }
        for name in names { origin.setFault("/\(name)", .trickle(bytesPerSecond: 512 << 10)) }
        let command = [Self.executable, "download"] + names.map { "src/\($0)" } + ["--wait", "--library", folder.path]

        // When the engine is killed again and again mid-transfer
        var random = SplitMix(seed: Self.seed)
        var claimedAfterKills: [Int64] = []
        for _ in 0..<Self.kills {
            let child = try ChildProcess.start(command)
            usleep(UInt32(30_000 + random.next() % 270_000))  // the seeded kill moment, 30–300 ms in
            child.kill(SIGKILL)
            #expect(child.wait(deadline: 5))
            // Then after each kill: the store is sound and every claimed byte is on disk
            let claimed = try Self.checkInvariants(folder: folder, itemIDs: itemIDs, expected: expected)
            claimedAfterKills.append(claimed)
        }
        if ProcessInfo.processInfo.environment["CRASH_LOG"] != nil { print("claimed after each kill:", claimedAfterKills) }
        #expect(claimedAfterKills.last ?? 0 > 0, "the kills never let a byte be committed")
        #expect(claimedAfterKills.last ?? 0 < sizes.reduce(0, +), "the downloads finished before the kills ended")

        // And a last run without kills resumes from the committed bytes and completes
        origin.clearFaults()
        origin.clearLog()
        let final = try ChildProcess.run(command, deadline: 30)
        #expect(final.status == 0, "stdout: \(final.stdout)\nstderr: \(final.stderr)")
        _ = try Self.checkInvariants(folder: folder, itemIDs: itemIDs, expected: expected)
        let store = try LibraryStore.open(folder: folder)
        defer { try? store.close() }
        for (index, id) in itemIDs.enumerated() {
            let item = try #require(try store.item(id: id))
            #expect(item.state == .cached)
            #expect(try store.presentRanges(itemID: id, file: "media") == [0..<sizes[index]])
            let path = folder.appendingPathComponent("cache/\(id)/media").path
            #expect(try SHA256Digest.hex(ofFileAt: path, length: sizes[index]) == item.sha256)
        }
        let resumedFrom = origin.requests.compactMap { $0.header("range") }
        #expect(resumedFrom.contains { !$0.hasPrefix("bytes=0-") }, "the last run fetched everything again: \(resumedFrom)")
    }

    /// integrity_check is ok, and each claimed range lies in the file and holds the origin's
    /// bytes. Returns the bytes claimed over all items.
    static func checkInvariants(folder: URL, itemIDs: [Int64], expected: [Data]) throws -> Int64 {
        let store = try LibraryStore.open(folder: folder)
        defer { try? store.close() }
        #expect(try store.integrityCheck() == ["ok"])
        var claimed: Int64 = 0
        for (index, id) in itemIDs.enumerated() {
            let ranges = try store.presentRanges(itemID: id, file: "media")
            guard !ranges.isEmpty else { continue }
            let path = folder.appendingPathComponent("cache/\(id)/media").path
            let onDisk = try Data(contentsOf: URL(fileURLWithPath: path))
            for range in ranges {
                claimed += Int64(range.count)
                guard range.upperBound <= Int64(onDisk.count) else {
                    Issue.record("item \(id) claims \(range) but its file has \(onDisk.count) bytes")
                    continue
                }
                let lower = Int(range.lowerBound), upper = Int(range.upperBound)
                #expect(onDisk[lower..<upper] == expected[index][lower..<upper], "item \(id) claims \(range) with wrong bytes")
            }
        }
        return claimed
    }
}

/// A small seeded generator, so a failing kill schedule can be replayed.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt32 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return UInt32(truncatingIfNeeded: z ^ (z >> 31))
    }
}
