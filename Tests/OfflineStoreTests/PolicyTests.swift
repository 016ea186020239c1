import Foundation
import Testing
@testable import OfflineStore

@Suite("Policies")
struct PolicyTests {
    @Test("Defaults follow the design")
    func defaults() throws {
        try withLibrary { store, _ throws in
            let p = try store.policies()
            #expect(p.maxConcurrentDownloads == 3)
            #expect(p.fileSizeMax == .unlimited && p.dailyLimit == .unlimited && p.cacheLimit == .unlimited)
            #expect(p.freeSpaceReserve == 1 << 30)
            #expect(p.autoPurge == false)
            #expect(p.downloadWindow == .always)
            #expect(p.downloadBehavior == DownloadBehavior.none)
            #expect(p.retryLimit == 3 && p.recentDays == 7)
            #expect(p.syncInterval == 3600)
            #expect(p.pauseOnMetered && !p.pauseOnBattery && p.minBattery == 0 && p.exemptLocalOrigins)
            let all = try store.allPolicies()
            #expect(all.map(\.name) == Policy.allCases.map(\.name))
            #expect(all.allSatisfy { $0.isDefault })
        }
    }

    @Test("User values parse to canonical forms", arguments: [
        ("cache-limit", "10G", "10GiB"),
        ("cache-limit", "500MiB", "500MiB"),
        ("cache-limit", "1.5GB", "1500MB"),
        ("cache-limit", "1.5G", "1536MiB"),
        ("cache-limit", "Unlimited", "unlimited"),
        ("daily-limit", "4097", "4097"),
        ("daily-limit", "2 KB", "2KB"),
        ("file-size-max", "1024", "1KiB"),
        ("free-space-reserve", "0", "0"),
        ("auto-purge", "TRUE", "on"),
        ("auto-purge", "no", "off"),
        ("download-window", "1:00-6:00", "01:00-06:00"),
        ("download-window", "22:30-06:00", "22:30-06:00"),
        ("download-window", "always", "always"),
        ("download-behavior", "Auto", "auto"),
        ("retry-limit", "0", "0"),
        ("recent-days", "14d", "14"),
        ("sync-interval", "30m", "30m"),
        ("sync-interval", "90m", "90m"),
        ("sync-interval", "120m", "2h"),
        ("sync-interval", "2d", "2d"),
        ("sync-interval", "1h30m", "90m"),
        ("sync-interval", "3600", "1h"),
        ("max-concurrent-downloads", "8", "8"),
        ("on-metered", "Allow", "allow"),
        ("on-metered", "pause", "pause"),
        ("on-battery", "PAUSE", "pause"),
        ("min-battery", "20", "20"),
        ("min-battery", "20%", "20"),
        ("min-battery", "100 %", "100"),
        ("exempt-local-origins", "no", "off"),
        ("exempt-local-origins", "1", "on"),
    ])
    func parse(_ name: String, _ input: String, _ canonical: String) throws {
        let policy = try Policy.named(name)
        #expect(try policy.canonicalize(input) == canonical)
        #expect(try policy.canonicalize(canonical) == canonical) // printing is stable
    }

    @Test("Bad values name the policy and the accepted forms", arguments: [
        ("cache-limit", "lots"), ("cache-limit", "-5G"), ("cache-limit", "10X"), ("cache-limit", "1.2.3G"),
        ("auto-purge", "maybe"), ("download-window", "25:00-01:00"), ("download-window", "01:00-01:00"),
        ("download-window", "1-6"), ("download-behavior", "sometimes"), ("max-concurrent-downloads", "0"),
        ("retry-limit", "three"), ("sync-interval", "10s"), ("sync-interval", "1y"), ("recent-days", "-1"),
        ("on-metered", "off"), ("on-battery", "yes"), ("min-battery", "101"), ("min-battery", "-1"),
        ("min-battery", "15.5"), ("exempt-local-origins", "sometimes"),
    ])
    func rejects(_ name: String, _ input: String) throws {
        let policy = try Policy.named(name)
        #expect {
            try policy.canonicalize(input)
        } throws: { error in
            guard let error = error as? StoreError, error.code == .invalidPolicyValue else { return false }
            return error.message.contains(name) && error.message.contains(input) && error.message.contains("expected")
        }
    }

    @Test("Unknown policy names list the known ones")
    func unknown() throws {
        try withLibrary { store, _ throws in
            #expect {
                try store.setPolicy(name: "cache-size", value: "1G")
            } throws: { error in
                guard let error = error as? StoreError, error.code == .unknownPolicy else { return false }
                return error.message.contains("cache-size") && error.message.contains("cache-limit")
                    && error.message.contains("sync-interval")
            }
        }
    }

    @Test("Set, read typed, list, reset")
    func setAndRead() throws {
        try withLibrary { store, _ throws in
            #expect(try store.setPolicy(name: "cache-limit", value: "10G") == "10GiB")
            try store.setPolicy(name: "download-window", value: "22:00-06:00")
            try store.setPolicy(name: "download-behavior", value: "thumbnails")
            try store.setPolicy(name: "auto-purge", value: "on")
            try store.setPolicy(name: "sync-interval", value: "15m")
            try store.setPolicy(name: "max-concurrent-downloads", value: "3") // the default, spelled out

            #expect(try store.policy(.cacheLimit) == .bytes(10 * 1024 * 1024 * 1024))
            #expect(try store.policy(.cacheLimit).bytes == 10_737_418_240)
            #expect(try store.policy(.downloadWindow) == .between(startMinute: 22 * 60, endMinute: 6 * 60))
            #expect(try store.policy(.downloadBehavior) == .thumbnails)
            #expect(try store.policy(.autoPurge))
            #expect(try store.policy(.syncInterval) == 900)
            #expect(try store.policy(.maxConcurrentDownloads) == 3)

            let listed = Dictionary(uniqueKeysWithValues: try store.allPolicies().map { ($0.name, ($0.value, $0.isDefault)) })
            #expect(listed["cache-limit"]! == ("10GiB", false))
            #expect(listed["max-concurrent-downloads"]! == ("3", true))
            #expect(listed["retry-limit"]! == ("3", true))

            try store.setPolicy(name: "cache-limit", value: "default")
            #expect(try store.policy(.cacheLimit) == .unlimited)
        }
    }

    @Test("Download windows wrap midnight")
    func windows() throws {
        let utc = try #require(TimeZone(identifier: "UTC"))
        func at(_ h: Int, _ m: Int) -> Date { Date(timeIntervalSince1970: TimeInterval(h * 3600 + m * 60)) }
        let night = try #require(DownloadWindow(parsing: "22:00-06:00"))
        #expect(night.contains(at(23, 0), timeZone: utc))
        #expect(night.contains(at(0, 0), timeZone: utc))
        #expect(night.contains(at(5, 59), timeZone: utc))
        #expect(!night.contains(at(6, 0), timeZone: utc))
        #expect(!night.contains(at(12, 0), timeZone: utc))
        let day = try #require(DownloadWindow(parsing: "01:00-06:00"))
        #expect(day.contains(at(1, 0), timeZone: utc))
        #expect(!day.contains(at(0, 59), timeZone: utc))
        #expect(DownloadWindow.always.contains(at(13, 0), timeZone: utc))
    }
}
