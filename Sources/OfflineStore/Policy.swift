import Foundation

/// The run-time policies of a library (DESIGN §1), stored as settings under their names.
/// Values are parsed from user strings (`set <policy> <value>`) and printed back in a
/// canonical form; a policy never set has its default.
public enum Policy: String, Sendable, CaseIterable, Hashable {
    case maxConcurrentDownloads = "max-concurrent-downloads"
    case fileSizeMax = "file-size-max"
    case dailyLimit = "daily-limit"
    case cacheLimit = "cache-limit"
    case freeSpaceReserve = "free-space-reserve"
    case autoPurge = "auto-purge"
    case downloadWindow = "download-window"
    case downloadBehavior = "download-behavior"
    case retryLimit = "retry-limit"
    case recentDays = "recent-days"
    case syncInterval = "sync-interval"
    case deleteWatchedAfter = "delete-watched-after"
    case scannerReads = "scanner-reads"
    case hook
    case thumbnailCache = "thumbnail-cache"
    case sidecars
    case onMetered = "on-metered"
    case onBattery = "on-battery"
    case minBattery = "min-battery"
    case exemptLocalOrigins = "exempt-local-origins"

    /// The name users type.
    public var name: String { rawValue }

    /// The canonical default value.
    public var defaultValue: String {
        switch self {
        case .maxConcurrentDownloads: "3"
        case .fileSizeMax, .dailyLimit, .cacheLimit: "unlimited"
        case .freeSpaceReserve: "1GiB"
        case .autoPurge: "off"
        case .downloadWindow: "always"
        case .downloadBehavior: "none"
        case .retryLimit: "3"
        case .recentDays: "7"
        case .syncInterval: "1h"
        case .deleteWatchedAfter: "never"
        case .scannerReads: "header"
        case .hook: "none"
        case .thumbnailCache: "on"
        case .sidecars: "none"
        case .onMetered: "pause"
        case .onBattery: "allow"
        case .minBattery: "0"
        case .exemptLocalOrigins: "on"
        }
    }

    /// The forms this policy accepts, for error messages and help.
    public var acceptedForms: String {
        switch self {
        case .maxConcurrentDownloads: "an integer from 1 to 64"
        case .fileSizeMax, .dailyLimit, .cacheLimit:
            "'unlimited' or a size such as 500MiB, 10G, 1.5GB, 4096 (K/M/G/T and KiB…TiB are 1024-based, KB…TB 1000-based)"
        case .freeSpaceReserve: "a size such as 1GiB, 500M, 0"
        case .autoPurge: "on, off, true, false, yes, no, 1 or 0"
        case .downloadWindow: "'always' or HH:MM-HH:MM in local time (may wrap midnight, e.g. 22:00-06:00)"
        case .downloadBehavior: "none, auto or thumbnails"
        case .retryLimit: "an integer from 0 to 1000"
        case .recentDays: "a number of days from 0 to 36500 (e.g. 7 or 7d)"
        case .syncInterval: "a duration of at least 1m such as 30m, 1h, 2d, 90s"
        case .deleteWatchedAfter: "'never' or a duration such as 7d, 12h, 0 (at once)"
        case .scannerReads: "allow, header (the first and last MiB of a file, and 4 MiB elsewhere per open) or cached-only"
        case .hook: "a shell command run on events (at most 4096 bytes, one line), or none"
        case .thumbnailCache: "on, off, true, false, yes, no, 1 or 0"
        case .sidecars: "none or nfo (Kodi, Jellyfin and Emby read it)"
        case .onMetered, .onBattery: "pause or allow"
        case .minBattery: "a percentage from 0 to 100 (e.g. 20 or 20%)"
        case .exemptLocalOrigins: "on, off, true, false, yes, no, 1 or 0"
        }
    }

    /// Looks a policy up by name; the error lists the known names.
    public static func named(_ name: String) throws(StoreError) -> Policy {
        guard let policy = Policy(rawValue: name.lowercased()) else {
            let known = allCases.map(\.name).joined(separator: ", ")
            throw StoreError(.unknownPolicy, "unknown policy '\(name)'; known policies: \(known)")
        }
        return policy
    }

    /// Parses a user value and returns its canonical spelling (what the store keeps).
    public func canonicalize(_ raw: String) throws(StoreError) -> String {
        let text = raw.trimmingCharacters(in: .whitespaces)
        let value: String?
        switch self {
        case .maxConcurrentDownloads: value = PolicyParsing.integer(text, in: 1...64).map(String.init)
        case .retryLimit: value = PolicyParsing.integer(text, in: 0...1000).map(String.init)
        case .fileSizeMax, .dailyLimit, .cacheLimit: value = PolicyParsing.byteLimit(text)?.description
        case .freeSpaceReserve: value = PolicyParsing.bytes(text).map(PolicyParsing.formatBytes)
        case .autoPurge: value = PolicyParsing.bool(text).map { $0 ? "on" : "off" }
        case .downloadWindow: value = DownloadWindow(parsing: text)?.description
        case .downloadBehavior: value = DownloadBehavior(rawValue: text.lowercased())?.rawValue
        case .recentDays:
            let days = text.lowercased().hasSuffix("d") ? String(text.dropLast()) : text
            value = PolicyParsing.integer(days, in: 0...36500).map(String.init)
        case .syncInterval:
            value = PolicyParsing.duration(text).flatMap { $0 >= 60 ? PolicyParsing.formatDuration($0) : nil }
        case .deleteWatchedAfter:
            value = ["never", "off"].contains(text.lowercased()) ? "never" : PolicyParsing.duration(text).map(PolicyParsing.formatDuration)
        case .scannerReads: value = ScannerReads(rawValue: text.lowercased())?.rawValue
        case .thumbnailCache: value = PolicyParsing.bool(text).map { $0 ? "on" : "off" }
        case .sidecars: value = ["none", "nfo"].first { $0 == text.lowercased() }
        case .hook:
            let oneLine = !text.contains(where: \.isNewline) && !text.contains("\0") && text.utf8.count <= 4096
            value = ["", "none", "off"].contains(text.lowercased()) ? "none" : (oneLine ? text : nil)
        case .onMetered, .onBattery: value = ["pause", "allow"].first { $0 == text.lowercased() }
        case .minBattery:
            let percent = text.hasSuffix("%") ? String(text.dropLast()).trimmingCharacters(in: .whitespaces) : text
            value = PolicyParsing.integer(percent, in: 0...100).map(String.init)
        case .exemptLocalOrigins: value = PolicyParsing.bool(text).map { $0 ? "on" : "off" }
        }
        guard let value else {
            throw StoreError(.invalidPolicyValue, "invalid value '\(raw)' for \(name): expected \(acceptedForms)")
        }
        return value
    }
}

/// A byte cap that may be off.
public enum ByteLimit: Sendable, Hashable, CustomStringConvertible {
    case unlimited
    case bytes(Int64)

    /// The cap, or nil when unlimited.
    public var bytes: Int64? {
        if case .bytes(let n) = self { return n }
        return nil
    }

    public var description: String {
        switch self {
        case .unlimited: "unlimited"
        case .bytes(let n): PolicyParsing.formatBytes(n)
        }
    }
}

/// What uncached bytes of an item's media a scanner (a thumbnailer, an indexer, a media
/// server's scan) may have fetched for it; cached bytes it always reads.
public enum ScannerReads: String, Sendable, CaseIterable, Hashable {
    /// Whatever it reads.
    case allow
    /// The first and last MiB of the file (a container's header and index, where thumbnailers
    /// and indexers find what they describe), and `bytesElsewhere` more per open: the frame a
    /// thumbnailer seeks to, the cluster a Matroska indexer samples, a header past its first MiB.
    case header
    /// Nothing that is not cached.
    case cachedOnly = "cached-only"

    /// The bytes at the start and at the end of a file `header` allows.
    public static let headerBytes: Int64 = 1 << 20
    /// The bytes elsewhere `header` allows each open of a file: a scan then costs a few MiB
    /// per item whatever its size, not the whole file.
    public static let bytesElsewhere: Int64 = 4 << 20

    /// The first or last `headerBytes` of a `size`-byte file when `range` lies wholly in it:
    /// under `header` a scanner fetches there without spending its open's `bytesElsewhere`.
    /// Nil when `range` lies elsewhere.
    public static func headerRegion(holding range: Range<Int64>, size: Int64?) -> Range<Int64>? {
        if range.upperBound <= headerBytes { return 0..<headerBytes }
        guard let size, range.lowerBound >= size - headerBytes else { return nil }
        return (size - headerBytes)..<size
    }
}

/// What happens to newly discovered items.
public enum DownloadBehavior: String, Sendable, CaseIterable, Hashable {
    /// Download only on request.
    case none
    /// Download every new item, like a podcast client.
    case auto
    /// Fetch thumbnails only.
    case thumbnails
}

/// When downloads may run, in local time.
public enum DownloadWindow: Sendable, Hashable, CustomStringConvertible {
    case always
    /// Minutes after local midnight; `start > end` wraps midnight. Start is inclusive, end exclusive.
    case between(startMinute: Int, endMinute: Int)

    /// Parses `always` or `HH:MM-HH:MM` (start ≠ end).
    public init?(parsing text: String) {
        if text.lowercased() == "always" {
            self = .always
            return
        }
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let start = Self.minutes(parts[0]), let end = Self.minutes(parts[1]), start != end else {
            return nil
        }
        self = .between(startMinute: start, endMinute: end)
    }

    private static func minutes(_ text: Substring) -> Int? {
        let hm = text.trimmingCharacters(in: .whitespaces).split(separator: ":", omittingEmptySubsequences: false)
        guard hm.count == 2, (1...2).contains(hm[0].count), hm[1].count == 2,
              let h = Int(hm[0]), let m = Int(hm[1]), (0...23).contains(h), (0...59).contains(m) else { return nil }
        return h * 60 + m
    }

    /// Whether downloads may run at `date` in `timeZone`.
    public func contains(_ date: Date, timeZone: TimeZone = .current) -> Bool {
        guard case .between(let start, let end) = self else { return true }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.hour, .minute], from: date)
        let minute = (parts.hour ?? 0) * 60 + (parts.minute ?? 0)
        return start < end ? (minute >= start && minute < end) : (minute >= start || minute < end)
    }

    public var description: String {
        switch self {
        case .always: return "always"
        case .between(let s, let e):
            func hm(_ m: Int) -> String {
                let h = m / 60, mm = m % 60
                return (h < 10 ? "0" : "") + "\(h):" + (mm < 10 ? "0" : "") + "\(mm)"
            }
            return "\(hm(s))-\(hm(e))"
        }
    }
}

/// Every policy with its typed value: one snapshot for a scheduler tick.
public struct PolicySet: Sendable, Hashable {
    public var maxConcurrentDownloads: Int
    public var fileSizeMax: ByteLimit
    public var dailyLimit: ByteLimit
    public var cacheLimit: ByteLimit
    public var freeSpaceReserve: Int64
    public var autoPurge: Bool
    public var downloadWindow: DownloadWindow
    public var downloadBehavior: DownloadBehavior
    public var retryLimit: Int
    public var recentDays: Int
    /// Seconds.
    public var syncInterval: TimeInterval
    /// Seconds after an item is marked watched that its cached media is evicted; nil: never.
    public var deleteWatchedAfter: TimeInterval?
    /// What uncached bytes scanner-class programs may have read.
    public var scannerReads: ScannerReads
    /// The shell command run on events (`HookRunner`); nil: none.
    public var hook: String?
    /// The mount writes the desktop's thumbnails of listed items (`DesktopThumbnails`).
    public var thumbnailCache: Bool
    /// Each item has a `<name>.nfo` beside it (`ItemSidecar`).
    public var nfoSidecars: Bool
    /// `on-metered pause`: no media download on a connection NetworkManager calls metered.
    public var pauseOnMetered: Bool
    /// `on-battery pause`: no media download while the machine runs on battery.
    public var pauseOnBattery: Bool
    /// Percent: no media download on battery below this charge (0: any charge).
    public var minBattery: Int
    /// Downloads from loopback or private-network origins ignore the three rules above.
    public var exemptLocalOrigins: Bool

    /// Builds the set from canonical stored strings; anything missing or unreadable is the default.
    init(values: [Policy: String]) {
        func text(_ p: Policy) -> String {
            if let v = values[p], let c = try? p.canonicalize(v) { return c }
            return p.defaultValue
        }
        maxConcurrentDownloads = Int(text(.maxConcurrentDownloads)) ?? 3
        fileSizeMax = PolicyParsing.byteLimit(text(.fileSizeMax)) ?? .unlimited
        dailyLimit = PolicyParsing.byteLimit(text(.dailyLimit)) ?? .unlimited
        cacheLimit = PolicyParsing.byteLimit(text(.cacheLimit)) ?? .unlimited
        freeSpaceReserve = PolicyParsing.bytes(text(.freeSpaceReserve)) ?? 1 << 30
        autoPurge = PolicyParsing.bool(text(.autoPurge)) ?? false
        downloadWindow = DownloadWindow(parsing: text(.downloadWindow)) ?? .always
        downloadBehavior = DownloadBehavior(rawValue: text(.downloadBehavior)) ?? .none
        retryLimit = Int(text(.retryLimit)) ?? 3
        recentDays = Int(text(.recentDays)) ?? 7
        syncInterval = PolicyParsing.duration(text(.syncInterval)) ?? 3600
        deleteWatchedAfter = PolicyParsing.duration(text(.deleteWatchedAfter))
        scannerReads = ScannerReads(rawValue: text(.scannerReads)) ?? .header
        hook = text(.hook) == "none" ? nil : text(.hook)
        thumbnailCache = PolicyParsing.bool(text(.thumbnailCache)) ?? true
        nfoSidecars = text(.sidecars) == "nfo"
        pauseOnMetered = text(.onMetered) == "pause"
        pauseOnBattery = text(.onBattery) == "pause"
        minBattery = Int(text(.minBattery)) ?? 0
        exemptLocalOrigins = PolicyParsing.bool(text(.exemptLocalOrigins)) ?? true
    }

    /// All defaults.
    public static let defaults = PolicySet(values: [:])
}
