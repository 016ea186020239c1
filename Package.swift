// swift-tools-version: 6.1
// offlinefs: an offline media library for Linux, shown as a FUSE filesystem.
//
// Layers, bottom to top (each imports only the ones below it):
//   CCurlShim / CFuseShim   C shims for what Swift cannot import (variadic calls, macros)
//   CCryptoShim             SHA-256 from the system libcrypto (OpenSSL EVP)
//   OfflineHTTP             typed Swift binding over libcurl (easy + multi)
//   OfflineFUSE             typed Swift binding over libfuse3's low-level API
//   OfflineDBus             typed Swift binding over libsystemd's sd-bus (CSystemd)
//   OfflineThumbnails       freedesktop.org thumbnails through gdk-pixbuf and GLib (CGdkPixbuf)
//   OfflineStore            the SQLite library database (GRDB), records, file naming
//   OfflineFeeds            pure parsers for JSON catalogs, RSS and Atom (untrusted input)
//   OfflineEngine           sync, downloads, scheduler: the one engine every front end uses
//   OfflineMount            the FUSE filesystem: translates kernel requests, asks the engine
//   offlinefs               the command line (swift-argument-parser)
// Every module a target's files import is in its dependencies, and OfflineMount reaches the
// store and libcurl only through the engine (Tests/PackagingTests/LayeringTests.swift).
// OfflineTestSupport (an in-process HTTP origin with fault injection) serves the tests,
// the benchmarks and the demo; nm-stand-in (C, sd-bus) plays NetworkManager on a test's bus.
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    // A generic type's metadata through its accessor, not by demangling its name: demangling
    // checks each conformance by scanning every conformance record of the process, at the
    // first use of each type, i.e. during a fresh mount's first open and read (docs/decisions.md).
    .unsafeFlags(["-Xfrontend", "-disable-concrete-type-metadata-mangled-name-accessors"]),
]

let package = Package(
    name: "offlinefs",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "offlinefs", targets: ["offlinefs"]),
        .executable(name: "offlinefs-bench", targets: ["OfflineBenchmarks"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        // C shims
        .target(
            name: "CCurlShim",
            linkerSettings: [.linkedLibrary("curl")]
        ),
        // SHA-256 from the system OpenSSL (libssl-dev) to verify downloads.
        .target(
            name: "CCryptoShim",
            linkerSettings: [.linkedLibrary("crypto")]
        ),
        .target(name: "CSystemShim"),
        .target(
            name: "CFuseShim",
            linkerSettings: [.linkedLibrary("fuse3")]
        ),
        // libsystemd's sd-bus: NetworkManager's metered flag on the system bus.
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        // gdk-pixbuf and GLib: the desktop's thumbnails (freedesktop.org thumbnail standard).
        .systemLibrary(name: "CGdkPixbuf", pkgConfig: "gdk-pixbuf-2.0", providers: [.apt(["libgdk-pixbuf-2.0-dev"])]),

        // Bindings and layers
        .target(
            name: "OfflineHTTP",
            dependencies: ["CCurlShim", "CSystemShim", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "OfflineThumbnails",
            dependencies: ["CGdkPixbuf"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "OfflineFUSE",
            dependencies: ["CFuseShim", "CSystemShim"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "OfflineDBus",
            // CSystemShim: eventfd(2), which Swift's Glibc module leaves out.
            dependencies: ["CSystemd", "CSystemShim"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "OfflineStore",
            // GRDBSQLite: SQLite's C API, to read the columns of 100k-row listings in place.
            dependencies: [.product(name: "GRDB", package: "GRDB.swift"), .product(name: "GRDBSQLite", package: "GRDB.swift")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "OfflineFeeds",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "OfflineEngine",
            dependencies: [
                "OfflineHTTP", "OfflineDBus", "OfflineStore", "OfflineFeeds", "OfflineThumbnails", "CCryptoShim", "CSystemShim",
                .product(name: "Logging", package: "swift-log"),
            ],
            // Imports are internal unless a file's public API needs the module (`public import`).
            swiftSettings: swiftSettings + [.enableUpcomingFeature("InternalImportsByDefault")]
        ),
        .target(
            name: "OfflineMount",
            // Never the store nor the HTTP binding: the engine answers (`LibraryView`, `LibraryReader`).
            // CSystemShim: malloc_trim, which Swift's Glibc module leaves out.
            dependencies: ["OfflineFUSE", "OfflineEngine", "CSystemShim", .product(name: "Logging", package: "swift-log")],
            // Imports are internal unless a file's public API needs the module (`public import`),
            // so the mount's interface shows which layers it hands on to its callers.
            swiftSettings: swiftSettings + [.enableUpcomingFeature("InternalImportsByDefault")]
        ),
        .target(
            name: "OfflineTestSupport",
            dependencies: ["CSystemShim", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "offlinefs",
            // OfflineStore: the commands read and write the library's records; OfflineHTTP: the
            // version string; OfflineFUSE: mount-table and unmount helpers; CSystemShim: malloc's
            // arenas.
            dependencies: [
                "OfflineEngine", "OfflineMount", "OfflineStore", "OfflineHTTP", "OfflineFUSE", "OfflineTestSupport",
                "CSystemShim",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // The demo's sample media, generated once by Demo/make-media.sh (see DemoMedia).
            exclude: ["Demo/make-media.sh"],
            resources: [.copy("Demo/Media")],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "OfflineBenchmarks",
            dependencies: ["OfflineEngine", "OfflineStore", "OfflineHTTP", "OfflineMount", "OfflineFUSE", "OfflineTestSupport",
                           "CSystemShim", .product(name: "Logging", package: "swift-log")],
            path: "Benchmarks/OfflineBenchmarks",
            swiftSettings: swiftSettings
        ),

        // A tiny in-memory filesystem the OfflineFUSE tests mount as a child process.
        .executableTarget(
            name: "fuse-example",
            dependencies: ["OfflineFUSE"],
            path: "Tests/FUSEExample",
            swiftSettings: swiftSettings
        ),

        // A stand-in NetworkManager on a test's private bus: owns the name and exports a
        // `Metered` property that tests flip (busctl set-property) and end (SIGTERM).
        .executableTarget(
            name: "nm-stand-in",
            path: "Tests/NetworkManagerStandIn",
            linkerSettings: [.linkedLibrary("systemd")]
        ),

        // Tests
        .testTarget(name: "OfflineHTTPTests", dependencies: ["OfflineHTTP", "OfflineTestSupport"], swiftSettings: swiftSettings),
        // CFuseShim: the tests call getxattr(2)/listxattr(2) directly (not in Swift's Glibc module).
        .testTarget(name: "OfflineFUSETests", dependencies: ["OfflineFUSE", "OfflineTestSupport", "CFuseShim"], swiftSettings: swiftSettings),
        .testTarget(name: "OfflineStoreTests", dependencies: ["OfflineStore", .product(name: "GRDB", package: "GRDB.swift")], swiftSettings: swiftSettings),
        .testTarget(
            name: "OfflineFeedsTests", dependencies: ["OfflineFeeds"],
            resources: [.copy("Fixtures")], swiftSettings: swiftSettings
        ),
        // OfflineStore: the crash test inspects the range map a killed engine left behind.
        // OfflineFeeds: catalogs parsed as a sync parses them.
        .testTarget(name: "OfflineEngineTests", dependencies: ["OfflineEngine", "OfflineStore", "OfflineFeeds", "OfflineTestSupport", "OfflineHTTP",
                                                          .product(name: "Logging", package: "swift-log"),
                                                          // GRDB: the store's own errors (a full disk) to hand the engine.
                                                          .product(name: "GRDB", package: "GRDB.swift")],
                    swiftSettings: swiftSettings),
        .testTarget(name: "OfflineTestSupportTests", dependencies: ["OfflineTestSupport"], swiftSettings: swiftSettings),
        .testTarget(
            // CFuseShim: getxattr(2)/listxattr(2) for the xattr size protocol tests.
            // OfflineStore: fixtures set up and inspect the library the mount shows.
            name: "OfflineMountTests",
            // Logging: the direct setup's file system logs (LibraryMount.swift).
            dependencies: ["OfflineMount", "OfflineEngine", "OfflineStore", "OfflineFUSE", "OfflineThumbnails", "OfflineTestSupport", "CFuseShim",
                           .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "CLITests", dependencies: ["OfflineTestSupport", "OfflineFUSE"], exclude: ["HelpSnapshots"], swiftSettings: swiftSettings),
        // Man page lint, make install into a staging folder, systemd-analyze verify of the unit.
        // OfflineStore: the policy names and defaults offlinefs(5) must list.
        .testTarget(name: "PackagingTests", dependencies: ["OfflineStore"], swiftSettings: swiftSettings),
    ]
)
