import Foundation

/// The demo's sample media files (generated once by `make-media.sh`, committed in
/// `Demo/Media`), found at run time.
///
/// Not `Bundle.module`: its accessor stops the process when the bundle is not beside the
/// executable or in the build folder, which is the case for an installed `offlinefs`. The
/// folders searched, in order:
/// 1. `$OFFLINEFS_DEMO_MEDIA`;
/// 2. `<executable folder>/offlinefs_offlinefs.resources/Media` (SwiftPM's resource bundle:
///    `swift run`, `swift build`);
/// 3. `<executable folder>/../share/offlinefs/demo` (`make install`).
struct DemoMedia {
    /// The folder holding `acme/` and `owls/`.
    let folder: URL

    /// A file of the sample, by path relative to `folder` (`acme/launch-day.mp4`).
    struct File: Hashable {
        var relativePath: String
        var size: Int64
    }

    static func candidates(environment: [String: String] = ProcessInfo.processInfo.environment) -> [URL] {
        var folders: [URL] = []
        if let explicit = environment["OFFLINEFS_DEMO_MEDIA"], !explicit.isEmpty {
            folders.append(URL(fileURLWithPath: explicit))
        }
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        let binFolder = (Bundle.main.executableURL ?? executable).resolvingSymlinksInPath().deletingLastPathComponent()
        folders.append(binFolder.appendingPathComponent("offlinefs_offlinefs.resources/Media"))
        folders.append(binFolder.deletingLastPathComponent().appendingPathComponent("share/offlinefs/demo"))
        return folders
    }

    /// The first candidate folder that holds the sample, or an error naming every place looked at.
    static func locate() throws -> DemoMedia {
        let candidates = candidates()
        for folder in candidates
        where FileManager.default.fileExists(atPath: folder.appendingPathComponent("acme/launch-day.mp4").path) {
            return DemoMedia(folder: folder)
        }
        let places = candidates.map(\.path).joined(separator: ", ")
        throw CLIError("the demo's sample media are missing (looked in \(places)); set OFFLINEFS_DEMO_MEDIA to the Demo/Media folder")
    }

    /// Every file of the sample, sorted by path.
    func files() throws -> [File] {
        guard let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isRegularFileKey, .fileSizeKey]) else {
            throw CLIError("cannot read \(folder.path)")
        }
        let base = folder.resolvingSymlinksInPath().path + "/"
        var files: [File] = []
        for case let url as URL in walker {
            let values = try url.resourceValues(forKeys: [.isRegularFileKey, .fileSizeKey])
            guard values.isRegularFile == true else { continue }
            let path = url.resolvingSymlinksInPath().path
            guard path.hasPrefix(base) else { continue }
            files.append(File(relativePath: String(path.dropFirst(base.count)), size: Int64(values.fileSize ?? 0)))
        }
        return files.sorted { $0.relativePath < $1.relativePath }
    }

    func url(of relativePath: String) -> URL { folder.appendingPathComponent(relativePath) }

    /// The MIME type the origin sends, from the extension.
    static func contentType(of path: String) -> String {
        switch (path as NSString).pathExtension.lowercased() {
        case "mp4": "video/mp4"
        case "mp3": "audio/mpeg"
        case "jpg", "jpeg": "image/jpeg"
        case "vtt": "text/vtt; charset=utf-8"
        case "m3u8": "application/vnd.apple.mpegurl"
        case "ts": "video/mp2t"
        default: "application/octet-stream"
        }
    }
}
