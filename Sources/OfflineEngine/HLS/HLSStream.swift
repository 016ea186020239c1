public import Foundation
public import OfflineFeeds
public import OfflineStore

/// An HLS item's chosen rendition, parsed from its stored playlists: the variant's media
/// playlist (track 0) and the alternate audio and subtitles fetched with it, the files they
/// offer (`parts`), the origin URL behind each cache file, and the local playlists the mount
/// serves. Immutable; rebuilt from the store record after a restart with the same names and
/// cache keys, because both derive only from the playlists' text.
public final class HLSStream: Sendable {
    public let record: HLSStreamRecord
    public let tracks: [HLSTrack]
    /// Per track: keys, init segments, segments in playlist order; then the track playlists.
    public let parts: [HLSPart]
    /// Origin URL of each cache file.
    public let resourceURLs: [CacheFileKey: URL]
    /// `parts` index of each segment of every track, in order.
    public let segmentParts: [Int]
    /// `parts` indices of the main track's init segment(s) and segments: the one-file view.
    public let mainParts: [Int]
    public let container: HLSContainer?
    private let partIndex: [String: Int]
    private let localNames: [[HLSResource: String]]
    /// Each track's playlist as served from `.hls/<id>/` (bare part names), when the stream
    /// has several tracks: rendered once, read by every getattr and open.
    public let trackPlaylists: [[UInt8]]

    public var itemID: Int64 { record.itemID }
    /// The variant's own media playlist.
    public var playlist: HLSMediaPlaylist { tracks[0].playlist }
    /// Segments of every track.
    public var segmentCount: Int { segmentParts.count }
    /// Segments are AES-128 encrypted (kept encrypted in the cache).
    public var isEncrypted: Bool { tracks.contains { $0.playlist.segments.contains { $0.key != nil } } }

    /// Whether a fully cached copy can also be offered as one contiguous file: known
    /// container, clear segments, at most one init segment, and no separate audio track
    /// (the file would be silent).
    public var offersOneFile: Bool {
        guard container != nil, !isEncrypted, !tracks.contains(where: { $0.kind == .audio }) else { return false }
        return mainParts.filter { parts[$0].kind == .initSegment }.count <= 1
    }

    public init(record: HLSStreamRecord, limits: HLSLimits = HLSLimits()) throws(HLSFailure) {
        self.record = record
        var tracks = [HLSTrack(kind: .main, playlist: try Self.parse(record.playlist, url: record.playlistURL, limits: limits),
                               rendition: nil, prefix: "", playlistName: "video.m3u8")]
        var subtitles = 0, audio = 0
        for rendition in record.renditions {
            let playlist = try Self.parse(rendition.playlist, url: rendition.playlistURL, limits: limits)
            let summary = HLSRenditionRecordSummary(groupID: rendition.groupID, name: rendition.name,
                                                    language: rendition.language, isDefault: rendition.isDefault)
            switch rendition.kind {
            case .audio:
                // The first audio keeps the names it had before `audio=` existed: `audio.m3u8`,
                // `audio-<n>.aac`; the next are `audio-2.m3u8`, `audio-2-<n>.aac` …
                audio += 1
                tracks.append(HLSTrack(kind: .audio, playlist: playlist, rendition: summary,
                                       prefix: audio == 1 ? "audio-" : "audio-\(audio)-",
                                       playlistName: audio == 1 ? "audio.m3u8" : "audio-\(audio).m3u8"))
            case .subtitles:
                subtitles += 1
                tracks.append(HLSTrack(kind: .subtitles, playlist: playlist, rendition: summary,
                                       prefix: "subtitles-\(subtitles)-", playlistName: "subtitles-\(subtitles).m3u8"))
            }
        }
        self.tracks = tracks

        var resources: [URL: CacheFileKey] = [:]
        var resourceURLs: [CacheFileKey: URL] = [:]
        func resource(_ url: URL) -> CacheFileKey {
            if let key = resources[url] { return key }
            let key = "hls.\(resources.count)"
            resources[url] = key
            resourceURLs[key] = url
            return key
        }
        var parts: [HLSPart] = []
        var localNames: [[HLSResource: String]] = []
        var segmentParts: [Int] = []
        var mainParts: [Int] = []
        for (number, track) in tracks.enumerated() {
            var names: [HLSResource: String] = [:]
            let segments = track.playlist.segments
            for (n, key) in Self.unique(segments.compactMap(\.key)).enumerated() {
                // `key` (DESIGN §3) for scripts; the playlist points at `key.ts`, the same
                // bytes, because ffmpeg (and so mpv) refuses to open a local key file without
                // a media extension ("blocked for security reasons").
                let name = track.prefix + (n == 0 ? "key" : "key-\(n)")
                let keyResource = resource(key.url)
                parts.append(HLSPart(name: name, kind: .key, resource: keyResource, range: nil))
                parts.append(HLSPart(name: name + ".ts", kind: .key, resource: keyResource, range: nil))
                names[.key(key)] = name + ".ts"
            }
            let maps = Self.unique(segments.compactMap(\.map))
            for (n, map) in maps.enumerated() {
                let ext = Self.fileExtension(of: map.url, default: "mp4")
                let name = track.prefix + (n == 0 ? "init.\(ext)" : "init-\(n).\(ext)")
                if number == 0 { mainParts.append(parts.count) }
                parts.append(HLSPart(name: name, kind: .initSegment, resource: resource(map.url),
                                     range: map.byteRange.map(Self.range)))
                names[.map(map)] = name
            }
            let fallback = track.kind == .subtitles ? "vtt" : (maps.isEmpty ? "ts" : "m4s")
            for (index, segment) in segments.enumerated() {
                let name = "\(track.prefix)\(segment.sequence).\(Self.fileExtension(of: segment.url, default: fallback))"
                segmentParts.append(parts.count)
                if number == 0 { mainParts.append(parts.count) }
                parts.append(HLSPart(name: name, kind: .segment(track: number, index: index), resource: resource(segment.url),
                                     range: segment.byteRange.map(Self.range)))
                names[.segment(segment)] = name
            }
            localNames.append(names)
        }
        if tracks.count > 1 {
            for (number, track) in tracks.enumerated() {
                parts.append(HLSPart(name: track.playlistName, kind: .playlist(track: number), resource: "", range: nil))
            }
        }
        self.parts = parts
        self.resourceURLs = resourceURLs
        self.segmentParts = segmentParts
        self.mainParts = mainParts
        self.localNames = localNames
        trackPlaylists = tracks.count > 1
            ? tracks.indices.map { number in Array(Self.render(tracks[number].playlist, names: localNames[number], folder: nil).utf8) }
            : []
        partIndex = Dictionary(parts.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        let main = tracks[0].playlist
        if main.segments.contains(where: { $0.map != nil }) {
            container = .fragmentedMP4
        } else if let first = main.segments.first {
            container = HLSContainer(rawValue: Self.fileExtension(of: first.url, default: "ts"))
                .flatMap { $0 == .fragmentedMP4 ? nil : $0 }
        } else {
            container = nil
        }
    }

    public func part(named name: String) -> HLSPart? {
        partNumber(named: name).map { parts[$0] }
    }

    /// The index in `parts` of the part called `name` (a lookup in `.hls/<id>/`).
    public func partNumber(named name: String) -> Int? {
        partIndex[name]
    }

    /// The playlist the mount serves as the item's file, with every URI pointing at
    /// `<folder>/<part name>` (relative, e.g. `.hls/42`): the variant's media playlist, or a
    /// master playlist naming the tracks' playlists when there are alternate renditions.
    public func localPlaylist(folder: String) -> String {
        guard tracks.count > 1 else { return trackPlaylist(0, folder: folder) }
        var lines = ["#EXTM3U", "#EXT-X-VERSION:3"]
        var audioGroup: String?, subtitlesGroup: String?
        // One DEFAULT=YES audio: the rendition the origin made default, else the first.
        let defaultAudio = tracks.firstIndex { $0.kind == .audio && $0.rendition?.isDefault == true }
            ?? tracks.firstIndex { $0.kind == .audio }
        for (number, track) in tracks.enumerated().dropFirst() {
            guard let rendition = track.rendition else { continue }
            let group = Self.quotable(rendition.groupID)
            var attributes = [track.kind == .audio ? "TYPE=AUDIO" : "TYPE=SUBTITLES", "GROUP-ID=\"\(group)\"",
                              "NAME=\"\(Self.quotable(rendition.name))\""]
            if let language = rendition.language { attributes.append("LANGUAGE=\"\(Self.quotable(language))\"") }
            let isDefault = track.kind == .audio ? number == defaultAudio : rendition.isDefault
            attributes += ["DEFAULT=\(isDefault ? "YES" : "NO")", "AUTOSELECT=YES",
                           "URI=\"\(folder)/\(track.playlistName)\""]
            lines.append("#EXT-X-MEDIA:" + attributes.joined(separator: ","))
            if track.kind == .audio { audioGroup = group } else { subtitlesGroup = group }
        }
        var variant = ["BANDWIDTH=\(record.bandwidth ?? 1)"]
        if let resolution = record.resolution { variant.append("RESOLUTION=\(Self.quotable(resolution))") }
        if let codecs = record.codecs { variant.append("CODECS=\"\(Self.quotable(codecs))\"") }
        if let audioGroup { variant.append("AUDIO=\"\(audioGroup)\"") }
        if let subtitlesGroup { variant.append("SUBTITLES=\"\(subtitlesGroup)\"") }
        lines.append("#EXT-X-STREAM-INF:" + variant.joined(separator: ","))
        lines.append("\(folder)/\(tracks[0].playlistName)")
        return lines.joined(separator: "\n") + "\n"
    }

    /// Track `number`'s local media playlist. With `folder` nil its URIs are bare part names:
    /// it is served from `.hls/<id>/` itself.
    public func trackPlaylist(_ number: Int, folder: String? = nil) -> String {
        Self.render(tracks[number].playlist, names: localNames[number], folder: folder)
    }

    private static func render(_ playlist: HLSMediaPlaylist, names: [HLSResource: String], folder: String?) -> String {
        playlist.rendered { resource in
            let name = names[resource] ?? "missing"
            return folder.map { "\($0)/\(name)" } ?? name
        }
    }

    /// The segments of track `track` a `partial=<seconds>` download fetches: every one that
    /// starts before it (at least one).
    public func segmentIndices(track: Int = 0, partialSeconds: Double?) -> Range<Int> {
        let segments = tracks[track].playlist.segments
        guard let partialSeconds else { return 0..<segments.count }
        let end = segments.firstIndex { $0.startTime >= partialSeconds } ?? segments.count
        return 0..<min(segments.count, max(1, end))
    }

    /// Segments whose every byte is claimed in `states` (`LibraryStore.cacheStates`).
    public func segmentsPresent(in states: [String: (totalSize: Int64?, ranges: [Range<Int64>])]) -> Int {
        segmentParts.reduce(0) { count, index in
            let part = parts[index]
            guard let state = states[part.resource] else { return count }
            guard let wanted = part.range ?? state.totalSize.map({ 0..<$0 }) else { return count }
            let covered = state.ranges.contains { $0.lowerBound <= wanted.lowerBound && wanted.upperBound <= $0.upperBound }
            return covered ? count + 1 : count
        }
    }

    /// `BANDWIDTH` and `RESOLUTION` of the chosen variant, for people (`1200000 bps 640x360`).
    public var variantDescription: String {
        var words = [record.bandwidth.map { "\($0) bps" }, record.resolution, record.codecs.map { "codecs \($0)" }]
        for track in tracks.dropFirst() {
            let label = [track.rendition?.name, track.rendition?.language].compactMap { $0 }.joined(separator: " ")
            words.append("+\(track.kind == .audio ? "audio" : "subtitles") \(label)")
        }
        return words.compactMap { $0 }.joined(separator: " ")
    }

    // MARK: - Parsing and naming

    private static func parse(_ data: Data, url text: String, limits: HLSLimits) throws(HLSFailure) -> HLSMediaPlaylist {
        guard let url = URL(string: text) else {
            throw HLSFailure(.downloadFailed, "stored playlist URL \(text) is not a URL")
        }
        let parsed: HLSPlaylist
        do { parsed = try HLSParser.parse(data, url: url, limits: limits) } catch {
            throw HLSFailure(.downloadFailed, "media playlist \(text): \(error)")
        }
        guard case .media(let playlist) = parsed else {
            throw HLSFailure(.downloadFailed, "\(text) is a master playlist where a media playlist was expected")
        }
        return playlist
    }

    /// An attribute value from the origin, safe inside double quotes on one line.
    private static func quotable(_ text: String) -> String {
        String(text.unicodeScalars.filter { $0 != "\"" && $0.value >= 0x20 && $0.value != 0x7f }.map(Character.init))
    }

    private static func unique<T: Hashable>(_ values: [T]) -> [T] {
        var seen = Set<T>()
        return values.filter { seen.insert($0).inserted }
    }

    private static func range(_ byteRange: HLSByteRange) -> Range<Int64> {
        byteRange.offset..<(byteRange.offset + byteRange.length)
    }

    /// The URL's extension when it is a plain short one (`ts`, `m4s`, `aac`), else `fallback`.
    static func fileExtension(of url: URL, default fallback: String) -> String {
        let ext = url.pathExtension.lowercased()
        let plain = !ext.isEmpty && ext.count <= 5 && ext.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
        return plain ? ext : fallback
    }
}
