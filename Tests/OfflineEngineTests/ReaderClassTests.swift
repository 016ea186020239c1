import Foundation
import OfflineEngine
import OfflineTestSupport
import Testing

/// The class of the program behind a request, told from a thread id of a real process.
@Suite struct ReaderClassTests {
    @Test func theListsAndTheSettingName() throws {
        let classes = try ProgramClasses(overrides: "myplayer:player, cat:copier")
        #expect(classes.readerClass(of: "mpv") == .player)
        #expect(classes.readerClass(of: "ffmpeg") == .transcoder)
        #expect(classes.readerClass(of: "ffmpegthumbnail") == .scanner)  // as the kernel cuts it
        #expect(classes.readerClass(of: "rsync") == .copier)
        #expect(classes.readerClass(of: "myplayer") == .player)
        #expect(classes.readerClass(of: "cat") == .copier)
        #expect(classes.readerClass(of: "bash") == .other)
        #expect(throws: ProgramClasses.ParseError.self) { try ProgramClasses(overrides: "x:fast") }
        #expect(throws: ProgramClasses.ParseError.self) { try ProgramClasses(overrides: "justaname") }
    }

    /// Real programs, each kept waiting (on a FIFO nobody writes, or on its own child), and
    /// asked about by one of their thread ids, as a FUSE request would carry.
    @Test func realProgramsAreToldByTheirProcessNotTheirThread() throws {
        let folder = NSTemporaryDirectory() + "reader-class-\(getpid())"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let fifo = folder + "/never-written"
        #expect(mkfifo(fifo, 0o600) == 0)
        var programs: [(command: [String], expected: ReaderClass)] = [
            (["cat", fifo], .other),
            (["rsync", "-e", "sleep 60 #", "host:x", folder + "/copy"], .copier),
        ]
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/mpv") {
            programs.append((["mpv", "--no-config", "--idle=yes", "--vo=null", "--ao=null", "--really-quiet"], .player))
        }
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/ffmpeg") {
            programs.append((["ffmpeg", "-nostdin", "-v", "quiet", "-i", fifo, "-f", "null", "-"], .transcoder))
        }
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/ffmpegthumbnailer") {
            programs.append((["ffmpegthumbnailer", "-i", fifo, "-o", folder + "/thumb.png"], .scanner))
        }
        let classifier = ReaderClassifier(classes: try ProgramClasses())
        for (command, expected) in programs {
            let running = try ChildProcess.start(command)
            defer {
                running.kill(SIGKILL)
                _ = running.wait(deadline: 5)
            }
            // Once it runs the program (after exec), any of its threads names it.
            var answer = (name: "", readerClass: ReaderClass.other)
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline {
                let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(running.pid)/task")) ?? []
                let thread = threads.compactMap { Int32($0) }.max() ?? running.pid
                answer = classifier.classify(threadID: thread)
                if answer.name == String(command[0].prefix(15)) { break }
                usleep(10_000)  // polling an exec in another process; no event to wait on
            }
            #expect(answer.name == String(command[0].prefix(15)), "\(command[0]): \(answer)")
            #expect(answer.readerClass == expected, "\(command[0])")
        }
        #expect(classifier.classify(threadID: 0).readerClass == .other)
        #expect(classifier.classify(threadID: Int32.max).name == "")
    }
}
