import Foundation
import OfflineStore
import OfflineTestSupport
import Synchronization
import Testing

/// A mount runs for weeks: however many items are read, its descriptors and memory stay
/// bounded, under the open-file limit a desktop session gives (here 256, a quarter of the usual).
/// Kernel-only: the limit and the counts are the daemon process's (`prlimit`, `/proc/<pid>`).
extension RealMounts {
@Suite(.serialized,
       .enabled(if: FUSEAvailability.hasDevFuse, "no /dev/fuse"),
       .enabled(if: FUSEAvailability.hasFusermount, "no fusermount3 in PATH"))
struct DescriptorBoundTests {
    static let itemCount = 3_000
    static let itemSize: Int64 = 16 << 10
    static let readSize = 4 << 10
    /// The open-file limit the mount runs under (soft and hard: raising the soft one to the
    /// hard one, as the mount does at start, changes nothing).
    static let openFileLimit = 256
    /// Descriptors the mount may hold at any time: ~25 of its own (store, FUSE, transfer loop,
    /// log), 16 idle cache files with two each, and the files being read or fetched now.
    static let descriptorBound = 128
    /// How much the mount's memory may grow over 3,000 items read (its staging blocks, the
    /// tree's rebuilds as items become cached, the allocator's slack).
    static let rssGrowthBound = 32 << 20

    @Test func readingThreeThousandItemsKeepsDescriptorsAndMemoryBounded() throws {
        let (fixture, items) = try Self.manyItems()
        let heads = items.map { Head(fixture, $0) }
        try withMount(fixture, prefix: Self.limited) { (mount: MountedLibrary) throws in
            let watch = DaemonWatch(pid: mount.daemon.pid)
            let rssBefore = try watch.rss()
            // When each item is read once (4 KiB of it, the first read streams it in)
            for (n, head) in heads.enumerated() {
                do { try head.check() } catch { throw Failure("\(error); descriptors: \(watch.descriptorKinds())") }
                if n % 50 == 0 { try watch.sample() }
            }
            try watch.sample()
            // Then every item still reads, the descriptors stayed under the bound, and the
            // memory grew by less than the bound.
            for head in heads { try head.check() }
            try watch.sample()
            #expect(watch.maxDescriptors <= Self.descriptorBound, "peak \(watch.maxDescriptors) descriptors: \(watch.kindsAtPeak)")
            let growth = try watch.rss() - rssBefore
            #expect(growth <= Self.rssGrowthBound, "RSS grew by \(growth >> 20) MiB")
            print("descriptors: peak \(watch.maxDescriptors) (bound \(Self.descriptorBound)); RSS \(rssBefore >> 20) → \(try watch.rss() >> 20) MiB")
        }
    }

    @Test func eightReadersAndADownloadKeepDescriptorsBounded() throws {
        // And a download that runs for the whole test: 24 MiB at 12 MiB/s.
        let (fixture, items) = try Self.manyItems(plus: [ItemSpec(contentID: "big", title: "Big", size: 24 << 20, seed: 77)])
        let big = try #require(items.last)
        let heads = items.dropLast().map { Head(fixture, $0) }
        let bigURL = try #require(big.mediaURL.flatMap(URL.init(string:)))
        fixture.origin.setFault(bigURL.path, .trickle(bytesPerSecond: 12 << 20))
        try withMount(fixture, prefix: Self.limited) { (mount: MountedLibrary) throws in
            let watch = DaemonWatch(pid: mount.daemon.pid)
            #expect(fixture.control("download sources/many/Big [big].mp4\n") == nil)
            #expect(eventually { (try? fixture.current(big).state) == .downloading })
            // When 8 readers each read their share of the items, twice
            let failures = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: 8) { reader in
                for pass in 0..<2 {
                    for n in stride(from: heads.startIndex + reader, to: heads.endIndex, by: 8) {
                        do { try heads[n].check() } catch {
                            failures.withLock { $0.append("pass \(pass): \(error)") }
                        }
                        if n % 40 == reader { try? watch.sample() }
                    }
                }
            }
            // Then every read got the origin's bytes, the download ended with its bytes, and
            // the descriptors stayed under the bound throughout.
            #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { Array($0.prefix(5)) })")
            #expect(eventually(within: 20) { (try? fixture.current(big).state) == .cached })
            let expected = fixture.directory + "/big"
            try fixture.originBytes(big).write(to: URL(fileURLWithPath: expected))
            let cmp = try mount.run(["cmp", expected, fixture.path("sources/many/Big [big].mp4")])
            #expect(cmp.status == 0, "\(cmp.stdout)\(cmp.stderr)")
            try watch.sample()
            #expect(watch.maxDescriptors <= Self.descriptorBound, "peak \(watch.maxDescriptors) descriptors: \(watch.kindsAtPeak)")
            print("descriptors with 8 readers and a download: peak \(watch.maxDescriptors) (bound \(Self.descriptorBound)): \(watch.kindsAtPeak)")
        }
    }

    @Test func itemFilesHeldOpenCostTheMountNoDescriptorEach() throws {
        // Given 120 items whose thumbnails are in the cache (a side file is read from its cache
        // file, through a descriptor of the mount's readers' pool)
        let fixture = try LibraryFixture()
        let source = try fixture.addSource("many")
        let specs = (0..<120).map { n in ItemSpec(contentID: "t\(n)", title: "Thumb \(n)", size: 10, seed: UInt64(n + 1), thumbnail: true) }
        let items = try fixture.merge(source, specs)
        var thumbnails: [(path: String, bytes: [UInt8])] = []
        for spec in specs {
            let item = try #require(items[spec.contentID])
            let bytes = [UInt8](TestOrigin.generatedBytes(size: 3_000, seed: UInt64(item.id)))
            try fixture.writeCacheFile(item, file: "thumbnail", data: Data(bytes))
            thumbnails.append((fixture.path("sources/many/\(spec.title) [\(spec.contentID)]-thumb.jpg"), bytes))
        }
        // And a mount that may open only 64 files
        let mount = try MountedLibrary(fixture, prefix: ["prlimit", "--nofile=64:64", "--"])
        defer { mount.cleanUp() }
        let watch = DaemonWatch(pid: mount.daemon.pid)

        // When a program holds all 120 open and reads each whole
        var open: [Int32] = []
        defer { for fd in open { close(fd) } }
        for thumbnail in thumbnails {
            let fd = Glibc.open(thumbnail.path, O_RDONLY)
            try #require(fd >= 0, "open \(thumbnail.path): \(String(cString: strerror(errno)))")
            open.append(fd)
            var buffer = [UInt8](repeating: 0, count: 4_096)
            let count = pread(fd, &buffer, buffer.count, 0)
            #expect(count == thumbnail.bytes.count && Array(buffer.prefix(max(0, count))) == thumbnail.bytes, "\(thumbnail.path)")
        }
        // Then every read got its bytes, and while all are open the mount keeps at most its
        // readers' pool of thumbnails open (an eighth of the limit)
        #expect(watch.descriptorTargets().filter { $0.hasSuffix("/thumbnail") }.count <= 64 / 8)
        for fd in open { close(fd) }
        open = []
        let (unmount, daemon) = try mount.unmount()
        #expect(unmount.status == 0)
        #expect(!daemon.stderr.contains("ran out of file descriptors"), "\(daemon.stderr)")
    }

    /// Runs the mount (and the commands against it) under the test's open-file limit.
    static let limited = ["prlimit", "--nofile=\(openFileLimit):\(openFileLimit)", "--"]

    /// A library with one source, `many`, of `itemCount` uncached items and `extra`; the items
    /// in that order.
    static func manyItems(plus extra: [ItemSpec] = []) throws -> (LibraryFixture, [Item]) {
        let fixture = try LibraryFixture()
        let source = try fixture.addSource("many")
        let specs = (0..<itemCount).map { n in
            ItemSpec(contentID: "i\(n)", title: "Item \(n)", size: itemSize, seed: UInt64(n + 1))
        } + extra
        let byID = try fixture.merge(source, specs)
        return (fixture, try specs.map { spec in try #require(byID[spec.contentID]) })
    }

    /// An item's file under the mount and the origin's first `readSize` bytes of it.
    struct Head: Sendable {
        let path: String
        let expected: [UInt8]

        init(_ fixture: LibraryFixture, _ item: Item) {
            path = fixture.path("sources/many/\(item.fileName ?? "")")
            expected = [UInt8](fixture.originBytes(item).prefix(readSize))
        }

        /// Reads the first `readSize` bytes through the mount and compares them.
        func check() throws {
            let fd = open(path, O_RDONLY)
            guard fd >= 0 else { throw Failure("open \(path): \(String(cString: strerror(errno)))") }
            defer { close(fd) }
            var buffer = [UInt8](repeating: 0, count: readSize)
            let got = pread(fd, &buffer, readSize, 0)
            guard got == readSize else { throw Failure("read \(path): \(got < 0 ? String(cString: strerror(errno)) : "\(got) bytes")") }
            guard buffer == expected else { throw Failure("\(path): wrong bytes") }
        }
    }
}
}

/// The mount daemon's open descriptors and resident memory, from /proc.
private final class DaemonWatch: Sendable {
    let pid: pid_t
    private let peak = Mutex((count: 0, kinds: ""))

    init(pid: pid_t) {
        self.pid = pid
    }

    var maxDescriptors: Int { peak.withLock { $0.count } }
    /// What the descriptors pointed to at the peak (`descriptorKinds`).
    var kindsAtPeak: String { peak.withLock { $0.kinds } }

    func sample() throws {
        let count = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count
        guard count > maxDescriptors else { return }
        let kinds = descriptorKinds()
        peak.withLock { if count > $0.count { $0 = (count, kinds) } }
    }

    /// What each open descriptor points to.
    func descriptorTargets() -> [String] {
        let folder = "/proc/\(pid)/fd"
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).map { fd in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: folder + "/" + fd)) ?? "?"
        }
    }

    /// What the descriptors point to, counted by kind (cache files by their file name): for a
    /// failure message.
    func descriptorKinds() -> String {
        var kinds: [String: Int] = [:]
        for target in descriptorTargets() {
            let kind = target.contains("/cache/") ? "cache/*/" + (target as NSString).lastPathComponent
                : target.replacingOccurrences(of: #"[0-9]+"#, with: "N", options: .regularExpression)
            kinds[kind, default: 0] += 1
        }
        return kinds.sorted { $0.value > $1.value }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
    }

    /// Resident memory in bytes (`VmRSS`).
    func rss() throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else {
            throw Failure("no VmRSS in /proc/\(pid)/status")
        }
        return kilobytes << 10
    }
}
