import Foundation
import OfflineEngine
import OfflineStore
import OfflineTestSupport
import Testing

/// HARDENING 11 for HLS: `offlinefs download --wait` of an HLS item in a child process,
/// SIGKILLed at seeded moments while its segments trickle in. After every kill the store is
/// sound and each segment file claims only the origin's bytes; the last run completes,
/// fetching no complete segment again.
@Suite struct HLSCrashTests {
    /// Kills stop once some segments are complete (and at least 3 happened), so the last run
    /// has both complete segments to skip and missing ones to fetch, whatever the machine's speed.
    static let maxKills = 12
    static let seed: UInt64 = 0x4C5_0C0A

    @Test(.timeLimit(.minutes(1)))
    func killedHLSDownloadResumesAtSegmentGranularity() throws {
        try #require(FileManager.default.isExecutableFile(atPath: CrashTests.executable),
                     "offlinefs not built at \(CrashTests.executable)")
        let origin = try TestOrigin()
        defer { origin.stop() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("offlinefs-hls-crash-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }

        // Given an HLS item (6 segments of 23–40 KB) whose segments trickle at 12 KiB/s each
        try HLSFixtureStreams.serve("ts", on: origin)
        let segments = HLSFixtureStreams.segments("ts/high", count: 6)
        for path in segments { origin.setFault("/hls/\(path)", .trickle(bytesPerSecond: 12 << 10)) }
        let itemID: Int64
        do {
            let store = try LibraryStore.open(folder: folder)
            let source = try store.addSource(name: "src", feedURL: origin.url("/feed.json"))
            let entry = CatalogEntry(contentID: "show", title: "show", type: .hls, mediaURL: origin.url("/hls/ts/master.m3u8"))
            _ = try store.mergeCatalog(sourceID: source.id, title: nil, entries: [entry], isComplete: true, now: Date())
            itemID = try #require(try store.item(source: "src", contentID: "show")).id
            try store.close()
        }
        let command = [CrashTests.executable, "download", "src/show", "--wait", "--library", folder.path]

        // When the engine is killed again and again mid-transfer
        var random = SplitMix(seed: Self.seed)
        var presentAfterKills: [Int] = []
        for kill in 0..<Self.maxKills {
            let child = try ChildProcess.start(command)
            usleep(UInt32(400_000 + random.next() % 1_000_000))  // 0.4–1.4 s in
            child.kill(SIGKILL)
            #expect(child.wait(deadline: 5))
            // Then after each kill: the store is sound and every claimed byte is the origin's
            presentAfterKills.append(try Self.checkInvariants(folder: folder, itemID: itemID).count)
            if kill >= 2, presentAfterKills.last ?? 0 >= 2 { break }
        }
        if ProcessInfo.processInfo.environment["CRASH_LOG"] != nil { print("segments present after each kill:", presentAfterKills) }
        let completeBefore = try Self.checkInvariants(folder: folder, itemID: itemID)
        #expect(completeBefore.count < segments.count, "the download finished before the kills ended")
        #expect(!completeBefore.isEmpty, "no segment completed during \(presentAfterKills.count) kills")

        // And a last run without kills completes, fetching no complete segment again
        origin.clearFaults()
        origin.clearLog()
        let final = try ChildProcess.run(command, deadline: 30)
        #expect(final.status == 0, "stdout: \(final.stdout)\nstderr: \(final.stderr)")
        let complete = try Self.checkInvariants(folder: folder, itemID: itemID)
        #expect(complete.count == segments.count)
        let store = try LibraryStore.open(folder: folder)
        defer { try? store.close() }
        let item = try #require(try store.item(id: itemID))
        #expect(item.state == .cached)
        #expect(item.size == (try HLSFixtureStreams.size(segments)))
        let fetchedAgain = origin.requests.map(\.path).filter { completeBefore.contains($0) }
        #expect(fetchedAgain.isEmpty, "complete before the last run and fetched again: \(fetchedAgain)")
    }

    /// integrity_check is ok, and every range a segment file claims lies in the file and
    /// holds the origin's bytes. Returns the origin paths of the segments fully present.
    static func checkInvariants(folder: URL, itemID: Int64) throws -> Set<String> {
        let store = try LibraryStore.open(folder: folder)
        defer { try? store.close() }
        #expect(try store.integrityCheck() == ["ok"])
        guard let record = try store.hlsStream(itemID: itemID) else { return [] }
        let stream = try HLSStream(record: record)
        var complete = Set<String>()
        for (file, url) in stream.resourceURLs {
            let ranges = try store.presentRanges(itemID: itemID, file: file)
            guard !ranges.isEmpty, let fixture = HLSFixtureStreams.fixturePath(of: url) else { continue }
            let expected = try HLSFixtureStreams.data(fixture)
            let onDisk = try Data(contentsOf: URL(fileURLWithPath: CacheLayout.filePath(library: folder, itemID: itemID, file: file)))
            for range in ranges {
                guard range.upperBound <= Int64(onDisk.count), range.upperBound <= Int64(expected.count) else {
                    Issue.record("\(file) (\(fixture)) claims \(range): file has \(onDisk.count), origin \(expected.count) bytes")
                    continue
                }
                let lower = Int(range.lowerBound), upper = Int(range.upperBound)
                #expect(onDisk[lower..<upper] == expected[lower..<upper], "\(file) claims \(range) with wrong bytes")
            }
            if ranges == [0..<Int64(expected.count)] { complete.insert(url.path) }
        }
        return complete
    }
}
