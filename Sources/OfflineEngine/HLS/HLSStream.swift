import Foundation
import OfflineFeeds
import OfflineStore

/// An HLS item's chosen rendition, parsed from its stored media playlist: the files it
/// offers (`parts`), the origin URL behind each cache file, and the local playlist the mount
/// serves. Immutable; rebuilt from the store record after a restart with the same names and
/// cache keys, because both derive only from the playlist's text.
public final class HLSStream: Sendable {
    public let record: HLSStreamRecord
    public let playlist: HLSMediaPlaylist
    /// Keys, then init segments, then segments in playlist order.
    public let parts: [HLSPart]
    /// Origin URL of each cache file.
    public let resourceURLs: [CacheFileKey: URL]
    /// `parts` index of each segment, in order.
    public let segmentParts: [Int]
    public let container: HLSContainer?
    private let partIndex: [String: Int]
    private let localNames: [HLSResource: String]

    public var itemID: Int64 { record.itemID }
    public var segmentCount: Int { playlist.segments.count }
    /// Segments are AES-128 encrypted (kept encrypted in the cache).
    public var isEncrypted: Bool { playlist.segments.contains { $0.key != nil } }

    /// Whether a fully cached copy can also be offered as one contiguous file: known
    /// container, clear segments, at most one init segment.
    public var offersOneFile: Bool {
        guard container != nil, !isEncrypted else { return false }
        return parts.filter { $0.kind == .initSegment }.count <= 1
    }

    public init(record: HLSStreamRecord, limits: HLSLimits = HLSLimits()) throws(HLSFailure) {
        guard let url = URL(string: record.playlistURL) else {
            throw HLSFailure(.downloadFailed, "stored playlist URL \(record.playlistURL) is not a URL")
        }
        let parsed: HLSPlaylist
        do { parsed = try HLSParser.parse(record.playlist, url: url, limits: limits) } catch {
            throw HLSFailure(.downloadFailed, "media playlist \(record.playlistURL): \(error)")
        }
        guard case .media(let playlist) = parsed else {
            throw HLSFailure(.downloadFailed, "\(record.playlistURL) is a master playlist where a media playlist was expected")
        }
        self.record = record
        self.playlist = playlist

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
        var localNames: [HLSResource: String] = [:]
        let keys = Self.unique(playlist.segments.compactMap(\.key))
        for (n, key) in keys.enumerated() {
            // `key` (DESIGN §3) for scripts; the playlist points at `key.ts`, the same bytes,
            // because ffmpeg (and so mpv) refuses to open a local key file without a media
            // extension ("blocked for security reasons").
            let name = n == 0 ? "key" : "key-\(n)"
            let keyResource = resource(key.url)
            parts.append(HLSPart(name: name, kind: .key, resource: keyResource, range: nil))
            parts.append(HLSPart(name: name + ".ts", kind: .key, resource: keyResource, range: nil))
            localNames[.key(key)] = name + ".ts"
        }
        let maps = Self.unique(playlist.segments.compactMap(\.map))
        for (n, map) in maps.enumerated() {
            let ext = Self.fileExtension(of: map.url, default: "mp4")
            let name = n == 0 ? "init.\(ext)" : "init-\(n).\(ext)"
            parts.append(HLSPart(name: name, kind: .initSegment, resource: resource(map.url), range: map.byteRange.map(Self.range)))
            localNames[.map(map)] = name
        }
        var segmentParts: [Int] = []
        for (index, segment) in playlist.segments.enumerated() {
            let ext = Self.fileExtension(of: segment.url, default: maps.isEmpty ? "ts" : "m4s")
            let name = "\(segment.sequence).\(ext)"
            segmentParts.append(parts.count)
            parts.append(HLSPart(name: name, kind: .segment(index: index), resource: resource(segment.url),
                                 range: segment.byteRange.map(Self.range)))
            localNames[.segment(segment)] = name
        }
        self.parts = parts
        self.resourceURLs = resourceURLs
        self.segmentParts = segmentParts
        self.localNames = localNames
        partIndex = Dictionary(parts.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        if !maps.isEmpty {
            container = .fragmentedMP4
        } else if let first = playlist.segments.first {
            container = HLSContainer(rawValue: Self.fileExtension(of: first.url, default: "ts"))
                .flatMap { $0 == .fragmentedMP4 ? nil : $0 }
        } else {
            container = nil
        }
    }

    public func part(named name: String) -> HLSPart? {
        partIndex[name].map { parts[$0] }
    }

    /// The playlist the mount serves: the origin's media playlist with every segment, init
    /// and key URI pointing at `<folder>/<part name>` (relative, e.g. `.hls/42`).
    public func localPlaylist(folder: String) -> String {
        playlist.rendered { resource in "\(folder)/\(localNames[resource] ?? "missing")" }
    }

    /// The segments a `partial=<seconds>` download fetches: every one that starts before it.
    public func segmentIndices(partialSeconds: Double?) -> Range<Int> {
        guard let partialSeconds else { return 0..<segmentCount }
        let end = playlist.segments.firstIndex { $0.startTime >= partialSeconds } ?? segmentCount
        return 0..<min(segmentCount, max(1, end))
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
        [record.bandwidth.map { "\($0) bps" }, record.resolution, record.codecs.map { "codecs \($0)" }]
            .compactMap { $0 }.joined(separator: " ")
    }

    // MARK: - Naming

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
