import Foundation
import OfflineStore
import OfflineTestSupport
import Testing

/// `ffprobe` (a prober) over a fresh library keeps about what it reads: no read-ahead, no
/// first window, so a media server's probe does not download the library.
extension RealMounts {
@Suite(.serialized,
       .enabled(if: FUSEAvailability.hasDevFuse, "no /dev/fuse"),
       .enabled(if: FUSEAvailability.hasFusermount, "no fusermount3 in PATH"),
       .enabled(if: PlaybackPrograms.installed && FileManager.default.isExecutableFile(atPath: "/usr/bin/strace"),
                "needs ffmpeg and strace"))
struct ProberMountTests {
    /// Bytes `read`/`pread64` returned for `path`'s descriptor in an strace log.
    static func bytesRead(of path: String, in log: String) -> Int64 {
        var descriptors = Set<String>()
        var total: Int64 = 0
        for line in log.split(separator: "\n") {
            if line.contains("openat("), line.contains("\"\(path)\""), let fd = line.split(separator: "=").last {
                descriptors.insert(fd.trimmingCharacters(in: .whitespaces))
            } else if let open = line.range(of: "read("), let comma = line[open.upperBound...].firstIndex(of: ",") {
                let fd = String(line[open.upperBound..<comma])
                guard descriptors.contains(fd), let result = line.split(separator: "=").last,
                      let count = Int64(result.trimmingCharacters(in: .whitespaces)), count > 0 else { continue }
                total += count
            } else if line.contains("close("), let fd = line.split(separator: "(").last?.split(separator: ")").first {
                descriptors.remove(String(fd))
            }
        }
        return total
    }

    @Test func ffprobeOnEveryItemKeepsAboutWhatItReads() throws {
        let (fixture, items) = try PlaybackMountTests.videos(2)
        var reads: [Int64: Int64] = [:]
        try withMount(fixture) { (mount: MountedLibrary) throws in
            for item in items {
                let path = fixture.path("sources/acme/\(item.fileName!)")
                let log = fixture.directory + "/strace-\(item.id).txt"
                let run = try mount.run(["strace", "-f", "-e", "trace=openat,read,pread64,close", "-e", "signal=none", "-o", log,
                                         "ffprobe", "-v", "error", "-show_format", "-show_streams", path], deadline: 60)
                #expect(run.status == 0, "\(run.stderr)")
                reads[item.id] = Self.bytesRead(of: path, in: (try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
            }
        }
        for item in items {
            let read = try #require(reads[item.id])
            let kept = try fixture.current(item).bytesPresent
            print("ffprobe on \(item.contentID): read \(read) bytes, the cache kept \(try fixture.current(item).bytesPresent)")
            #expect(read > 0)
            #expect(kept <= read + read / 4 + (1 << 20), "\(item.contentID): read \(read), kept \(kept)")
            #expect(try fixture.current(item).state != .cached)
        }
    }
}
}
