import Foundation
import OfflineFeeds
import OfflineHTTP
import OfflineStore

/// Turns an HLS item's URL into the rendition to fetch: fetches the master playlist, picks a
/// variant (quality, bitrate or the policies), fetches its media playlist and checks it can
/// be downloaded (a finished VOD playlist, supported encryption). Blocking (network).
struct HLSResolver: Sendable {
    let client: HTTPClient
    let limits: HLSLimits
    let timeouts: HTTPTimeouts

    /// - Parameters:
    ///   - quality: the stored `quality` of the download (nil: the highest that fits `maxBytes`).
    ///   - audio: the stored `audio=` languages, fetched beside the default audio.
    ///   - maxBytes: file-size-max, for the default choice.
    func resolve(item: Item, quality: String?, audio: String?, maxBytes: Int64?, destinationPolicy: DestinationPolicy,
                 now: Date) throws(HLSFailure) -> HLSStreamRecord {
        guard let url = item.mediaURL else {
            throw HLSFailure(.contentNotFound, "the item has no playlist URL (metadata pending)")
        }
        let requested: HLSQuality?
        if let quality {
            guard let parsed = HLSQuality(quality) else {
                throw HLSFailure(.downloadFailed, "quality \(quality) is not low, medium, high or a number of bits per second")
            }
            requested = parsed
        } else {
            requested = nil
        }
        let first = try fetch(url, what: "playlist", policy: destinationPolicy)
        switch first.playlist {
        case .media(let media):
            try check(media, url: first.url)
            let size = Self.exactSize(media)
            return HLSStreamRecord(itemID: item.id, playlistURL: first.url, playlist: first.body, quality: quality,
                                   estimatedSize: size ?? item.size, audioLanguages: audio, chosenAt: now)
        case .master(let master):
            guard !master.variants.isEmpty else {
                throw HLSFailure(.downloadFailed, "master playlist \(first.url) lists no variants")
            }
            // Every variant lasts as long as the others: one media playlist gives the duration.
            var duration = item.duration
            var probed: (variant: HLSVariant, fetched: Fetched, media: HLSMediaPlaylist)?
            if requested == nil, maxBytes != nil, duration == nil,
               let highest = HLSQuality.choose(from: master.variants, quality: .high, duration: nil, maxBytes: nil) {
                let fetched = try fetch(highest.url.absoluteString, what: "media playlist", policy: destinationPolicy)
                guard case .media(let media) = fetched.playlist else {
                    throw HLSFailure(.downloadFailed, "variant \(fetched.url) is not a media playlist")
                }
                duration = media.totalDuration
                probed = (highest, fetched, media)
            }
            guard let variant = HLSQuality.choose(from: master.variants, quality: requested, duration: duration,
                                                  maxBytes: maxBytes) else {
                throw HLSFailure(.downloadFailed, "master playlist \(first.url) lists no variants")
            }
            let fetched: Fetched, media: HLSMediaPlaylist
            if let probed, probed.variant == variant {
                (fetched, media) = (probed.fetched, probed.media)
            } else {
                fetched = try fetch(variant.url.absoluteString, what: "media playlist", policy: destinationPolicy)
                guard case .media(let parsed) = fetched.playlist else {
                    throw HLSFailure(.downloadFailed, "variant \(fetched.url) is not a media playlist")
                }
                media = parsed
            }
            try check(media, url: fetched.url)
            let renditions = try fetchRenditions(of: variant, in: master, audio: HLSAudioLanguages.tags(audio),
                                                 policy: destinationPolicy)
            let estimate = Self.exactSize(media)
                ?? HLSQuality.estimatedBytes(bandwidth: variant.averageBandwidth ?? variant.bandwidth, duration: media.totalDuration)
            return HLSStreamRecord(itemID: item.id, playlistURL: fetched.url, playlist: fetched.body, quality: quality,
                                   bandwidth: variant.bandwidth,
                                   resolution: variant.resolution.map { "\($0.width)x\($0.height)" },
                                   codecs: variant.codecs, estimatedSize: estimate, renditions: renditions,
                                   audioLanguages: audio, variants: Self.summaries(master, duration: media.totalDuration),
                                   chosenAt: now)
        }
    }

    /// The variants of the item's master playlist with their size estimates, without choosing
    /// one (`offlinefs variants` before any sync prepared the item): the master and one media
    /// playlist, for the duration, unless the catalog gives it. Empty for a lone media playlist.
    func variants(item: Item, destinationPolicy: DestinationPolicy) throws(HLSFailure) -> [HLSVariantRecord] {
        guard let url = item.mediaURL else {
            throw HLSFailure(.contentNotFound, "the item has no playlist URL (metadata pending)")
        }
        let first = try fetch(url, what: "playlist", policy: destinationPolicy)
        guard case .master(let master) = first.playlist, let any = master.variants.first else { return [] }
        var duration = item.duration
        if duration == nil {
            let fetched = try fetch(any.url.absoluteString, what: "media playlist", policy: destinationPolicy)
            if case .media(let media) = fetched.playlist { duration = media.totalDuration }
        }
        return Self.summaries(master, duration: duration)
    }

    /// Each variant with its estimate and the languages its audio group offers, in the master
    /// playlist's order.
    static func summaries(_ master: HLSMasterPlaylist, duration: Double?) -> [HLSVariantRecord] {
        master.variants.map { variant in
            var languages: [String] = []
            for rendition in master.renditions where rendition.kind == .audio && rendition.groupID == variant.audioGroup {
                if let language = rendition.language, !languages.contains(language) { languages.append(language) }
            }
            return HLSVariantRecord(
                bandwidth: variant.bandwidth, averageBandwidth: variant.averageBandwidth,
                resolution: variant.resolution.map { "\($0.width)x\($0.height)" }, codecs: variant.codecs,
                estimatedSize: duration.map { HLSQuality.estimatedBytes(bandwidth: variant.averageBandwidth ?? variant.bandwidth, duration: $0) },
                audioLanguages: languages)
        }
    }

    /// The alternate renditions that go with `variant`: its audio group's default (or first)
    /// rendition that has its own playlist, then those in the `audio` languages (8 audio at
    /// most), and every subtitles rendition of its group (8 at most). Each must be a finished
    /// media playlist like the variant's.
    private func fetchRenditions(of variant: HLSVariant, in master: HLSMasterPlaylist, audio languages: [String],
                                 policy: DestinationPolicy) throws(HLSFailure) -> [HLSRenditionRecord] {
        var chosen: [HLSRendition] = []
        if let group = variant.audioGroup {
            let audio = master.renditions.filter { $0.kind == .audio && $0.groupID == group && $0.url != nil }
            if let pick = audio.first(where: \.isDefault) ?? audio.first { chosen.append(pick) }
            let asked = audio.filter { rendition in
                !chosen.contains(rendition) && languages.contains { HLSAudioLanguages.matches(rendition.language, $0) }
            }
            chosen += asked.prefix(8 - chosen.count)
        }
        if let group = variant.subtitlesGroup {
            chosen += master.renditions.filter { $0.kind == .subtitles && $0.groupID == group && $0.url != nil }.prefix(8)
        }
        var records: [HLSRenditionRecord] = []
        for rendition in chosen {
            guard let url = rendition.url else { continue }
            let kind: HLSRenditionRecord.Kind = rendition.kind == .audio ? .audio : .subtitles
            let fetched = try fetch(url.absoluteString, what: "\(kind.rawValue) rendition playlist", policy: policy)
            guard case .media(let media) = fetched.playlist else {
                throw HLSFailure(.downloadFailed, "\(kind.rawValue) rendition \(fetched.url) is not a media playlist")
            }
            try check(media, url: fetched.url)
            records.append(HLSRenditionRecord(kind: kind, groupID: rendition.groupID, name: rendition.name,
                                              language: rendition.language, isDefault: rendition.isDefault,
                                              playlistURL: fetched.url, playlist: fetched.body))
        }
        return records
    }

    /// A media playlist the engine can download whole.
    private func check(_ media: HLSMediaPlaylist, url: String) throws(HLSFailure) {
        guard media.hasEndList else {
            throw HLSFailure(.downloadFailed, "\(url) is a live playlist (no EXT-X-ENDLIST): only finished streams can be downloaded")
        }
        guard !media.segments.isEmpty else {
            throw HLSFailure(.downloadFailed, "\(url) lists no segments")
        }
        if media.segments.contains(where: { $0.key?.method == .sampleAES }) {
            throw HLSFailure(.downloadFailed, "\(url) uses SAMPLE-AES encryption, which offlinefs does not support (AES-128 only)")
        }
    }

    /// Total bytes when every segment and init segment has a byte range.
    static func exactSize(_ media: HLSMediaPlaylist) -> Int64? {
        var total: Int64 = 0
        var maps = Set<HLSMap>()
        for segment in media.segments {
            guard let range = segment.byteRange else { return nil }
            total += range.length
            if let map = segment.map, maps.insert(map).inserted {
                guard let mapRange = map.byteRange else { return nil }
                total += mapRange.length
            }
        }
        return total
    }

    private struct Fetched {
        var url: String
        var body: Data
        var playlist: HLSPlaylist
    }

    private func fetch(_ url: String, what: String, policy: DestinationPolicy) throws(HLSFailure) -> Fetched {
        let request = HTTPRequest(
            url: url, headers: [("Accept", "application/vnd.apple.mpegurl, audio/mpegurl, */*;q=0.5")],
            maxBodyBytes: Int64(limits.maxBytes), timeouts: timeouts, acceptCompressed: true, destinationPolicy: policy)
        let response: HTTPResponse
        switch client.perform(request) {
        case .failure(let error): throw HLSFailure(error, context: "\(what) \(url)")
        case .success(let value): response = value
        }
        guard response.status == 200 else {
            throw HLSFailure(.httpError, "\(what) \(url): HTTP \(response.status)")
        }
        guard let effective = URL(string: response.effectiveURL) ?? URL(string: url) else {
            throw HLSFailure(.downloadFailed, "\(what) \(url) is not a URL")
        }
        do {
            let playlist = try HLSParser.parse(response.body, url: effective, limits: limits)
            return Fetched(url: effective.absoluteString, body: response.body, playlist: playlist)
        } catch {
            throw HLSFailure(.downloadFailed, "\(what) \(url): \(error)")
        }
    }
}
