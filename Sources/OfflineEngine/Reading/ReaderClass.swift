import Foundation

/// What kind of program reads an item file. Read-ahead grows only for readers that prove
/// sequential, and never for scanners: a thumbnailer or an indexer reads a few pieces of each
/// file and should fetch no more than it reads.
public enum ReaderClass: String, Sendable, CaseIterable {
    /// Plays media start to end, and seeks (mpv, vlc, kodi, a media server streaming to a TV).
    case player
    /// Reads like a player, for another program (`ffmpeg`, a media server's transcoder): a
    /// conversion, a frame grab, a server's thumbnails. Its reads are not someone watching.
    case transcoder
    /// Runs on its own over many files and reads pieces of each (thumbnailers, indexers,
    /// minidlna): fetches what it reads, and the policy `scanner-reads` limits what uncached
    /// bytes it may have.
    case scanner
    /// Reads pieces of a file a person asked about (`file`, `ffprobe`, `mediainfo`): fetches
    /// what it reads, never limited.
    case prober
    /// Reads whole files to copy them (cp, rsync, tar, smbd).
    case copier
    /// Anything else (`cat`, `head`, shells, unknown programs).
    case other
}

extension ReaderClass {
    /// Scanners and probers read pieces: no first window, no read-ahead.
    public var readsPieces: Bool { self == .scanner || self == .prober }

    /// What a fetch for its reads asks the origin for: a player reads on from wherever it
    /// reads (after a seek too, before it has proved sequential), so one request serves it;
    /// the others stream once they want a lot at once.
    var fetchLength: FetchLength { self == .player || self == .transcoder ? .stream : .streamWhenLarge }

    /// A player or a copier rides out an origin out of reach for a moment (a dropped link, a
    /// restarting server) as mpv on a URL reconnects: its read asks again until its bound.
    /// Other programs (a file manager's sniffing, thumbnailers) get the failure at once.
    var ridesOutOutages: Bool { self == .player || self == .transcoder || self == .copier }
}

/// Which program names are which `ReaderClass`: the lists in one place (docs/reads.md shows
/// them), and a setting that adds to or overrides them (`-o reader_class=<program>:<class>`).
public struct ProgramClasses: Sendable, Hashable {
    /// Executable base names, as `/proc/<pid>/comm` gives them (cut at 15 bytes by the kernel).
    public static let builtIn: [ReaderClass: [String]] = [
        .player: ["mpv", "vlc", "ffplay", "totem", "celluloid", "mplayer", "smplayer", "kodi", "kodi.bin",
                  "haruna", "clapper", "parole", "dragon", "gst-play-1.0", "mpc-qt", "jellyfinmediaplayer",
                  "plexmediaserver", "jellyfin", "rhythmbox", "audacious", "clementine",
                  "strawberry", "lollypop", "elisa", "mpg123", "mpg321", "ogg123", "aplay", "paplay"],
        .transcoder: ["ffmpeg", "Plex Transcoder", "HandBrakeCLI", "ghb", "avconv"],
        .prober: ["file", "ffprobe", "mediainfo", "exiftool"],
        .scanner: ["ffmpegthumbnailer", "totem-video-thumbnailer", "gnome-desktop-thumbnailer", "evince-thumbnailer",
                   "tumblerd", "gst-discoverer-1.0", "tracker-extract",
                   "tracker-extract-3", "tracker-miner-fs", "tracker-miner-fs-3", "localsearch-extractor",
                   "localsearch-3", "baloo_file", "baloo_file_extractor", "minidlnad", "minidlna", "nautilus", "thunar",
                   "dolphin", "nemo", "caja", "pcmanfm", "kioworker", "kioslave5", "updatedb", "plocate"],
        .copier: ["cp", "rsync", "tar", "bsdtar", "smbd", "scp", "sftp-server", "rclone", "dd", "install", "mv", "pv",
                  "zip", "7z", "7za", "restic", "borg", "duplicity", "gvfsd-sftp", "gio", "nfsd"],
    ]

    private var byName: [String: ReaderClass]

    /// The built-in lists alone.
    public static let standard: ProgramClasses = (try? ProgramClasses()) ?? ProgramClasses(byName: [:])

    private init(byName: [String: ReaderClass]) { self.byName = byName }

    /// The built-in lists, with `overrides` (`name:class`, comma-separated) on top.
    public init(overrides: String = "") throws(ParseError) {
        byName = [:]
        for (readerClass, names) in Self.builtIn {
            for name in names { byName[Self.key(name)] = readerClass }
        }
        for pair in overrides.split(separator: ",") where !pair.trimmingCharacters(in: .whitespaces).isEmpty {
            let parts = pair.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, !parts[0].isEmpty, let readerClass = ReaderClass(rawValue: parts[1]) else {
                throw ParseError("reader class '\(pair)': use name:player, name:transcoder, name:scanner, name:prober, name:copier or name:other")
            }
            byName[Self.key(parts[0])] = readerClass
        }
    }

    /// The class of a program by its name (`other` when no list names it).
    public func readerClass(of name: String) -> ReaderClass {
        byName[Self.key(name)] ?? .other
    }

    /// The kernel keeps 15 bytes of a program's name (`TASK_COMM_LEN`): `ffmpegthumbnailer`
    /// is `ffmpegthumbnail` there.
    private static func key(_ name: String) -> String {
        String(decoding: name.utf8.prefix(15), as: UTF8.self)
    }

    public struct ParseError: Error, Sendable, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }
}

/// Tells the class of the program behind a FUSE request. The request carries a thread id:
/// the process is its thread group (`Tgid` in `/proc/<tid>/status`), named by its main
/// thread's `comm`. Asked once per open (reads use the open's answer): two small procfs
/// reads, about as much as a look-up in a cache keyed by pid and start time would cost
/// (finding the start time is a procfs read too), and such a cache would keep the name a
/// process had before it `exec`ed.
///
/// Requests that come through a file server (Samba's `smbd`, an NFS server) carry the
/// server's process: its clients cannot be told apart (docs/reads.md).
public struct ReaderClassifier: Sendable {
    public let classes: ProgramClasses
    private let proc: String

    /// - Parameter proc: where procfs is mounted.
    public init(classes: ProgramClasses, proc: String = "/proc") {
        self.classes = classes
        self.proc = proc
    }

    /// The program's name and class; `("", .other)` when the thread is gone or unreadable.
    public func classify(threadID: Int32) -> (name: String, readerClass: ReaderClass) {
        guard threadID > 0, let pid = threadGroup(of: threadID),
              let comm = read("\(proc)/\(pid)/comm") else { return ("", .other) }
        let name = String(decoding: comm.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
        return (name, classes.readerClass(of: name))
    }

    /// From the `Tgid:\t1234` line. Bytes, not Foundation's trimming: this runs before every
    /// open is answered.
    private func threadGroup(of threadID: Int32) -> Int32? {
        guard let status = read("\(proc)/\(threadID)/status") else { return nil }
        let field = "Tgid:".utf8
        for line in status.split(separator: UInt8(ascii: "\n")) where line.starts(with: field) {
            let digits = line.dropFirst(field.count).drop { $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: " ") }
            return Int32(String(decoding: digits, as: UTF8.self))
        }
        return nil
    }

    private func read(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return Array(buffer[..<count])
    }
}
