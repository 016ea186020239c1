public import Foundation
import OfflineThumbnails

/// The desktop's thumbnail cache (the freedesktop.org Thumbnail Managing Standard): for a
/// file's path, `normal/<md5>.png` (≤ 128 px) and `large/<md5>.png` (≤ 256 px), named by the
/// MD5 of the file's URI as GLib builds it, with `Thumb::URI` and `Thumb::MTime`, mode 0600,
/// written under a temporary name and renamed (docs/desktop.md). The mount decides which
/// files get entries; this writes and removes them.
public struct DesktopThumbnailCache: Sendable {
    static let sizes: [(folder: String, side: Int)] = [("normal", 128), ("large", 256)]

    public let folder: String

    public init(folder: String) {
        self.folder = folder
    }

    /// `$XDG_CACHE_HOME/thumbnails`, else `~/.cache/thumbnails`, of the user running the mount.
    public static func defaultFolder(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let cache = environment["XDG_CACHE_HOME"], cache.hasPrefix("/") { return cache + "/thumbnails" }
        return (environment["HOME"] ?? NSHomeDirectory()) + "/.cache/thumbnails"
    }

    /// The entry file name of `path` (`<md5 of its URI>.png`), or nil for a path with no URI.
    public func entryName(of path: String) -> String? {
        ThumbnailNaming.uri(ofPath: path).map(ThumbnailNaming.fileName(forURI:))
    }

    /// Whether every size's entry file of `path` exists (a `stat` each, no read): entries the
    /// user deleted are written again even when the mount remembers writing them.
    public func exists(_ path: String) -> Bool {
        guard let file = entryName(of: path) else { return false }
        return Self.sizes.allSatisfy { FileManager.default.fileExists(atPath: folder + "/\($0.folder)/" + file) }
    }

    /// Whether every size's entry of `path` is there for `mtime`.
    public func holds(_ path: String, mtime: Int) -> Bool {
        guard let uri = ThumbnailNaming.uri(ofPath: path) else { return false }
        let file = ThumbnailNaming.fileName(forURI: uri)
        return Self.sizes.allSatisfy { size in
            let target = folder + "/\(size.folder)/" + file
            guard FileManager.default.fileExists(atPath: target), let image = try? ThumbnailImage.read(target) else { return false }
            return image.option("tEXt::Thumb::URI") == uri && image.option("tEXt::Thumb::MTime") == String(mtime)
        }
    }

    /// Writes every size's entry of `path` at `mtime`, scaled from the image at `source`.
    public func write(_ path: String, mtime: Int, from source: String) throws {
        guard let uri = ThumbnailNaming.uri(ofPath: path) else { return }
        let file = ThumbnailNaming.fileName(forURI: uri)
        for size in Self.sizes {
            let target = folder + "/\(size.folder)/" + file
            try FileManager.default.createDirectory(atPath: (target as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let image = try ThumbnailImage.load(source, fittingIn: size.side)
            let temporary = target + ".offlinefs-\(getpid())"
            try image.savePNG(temporary, text: [("Thumb::URI", uri), ("Thumb::MTime", String(mtime)), ("Software", "offlinefs")])
            chmod(temporary, 0o600)
            guard rename(temporary, target) == 0 else {
                unlink(temporary)
                throw ThumbnailImage.Failure(description: "\(target): \(String(cString: strerror(errno)))")
            }
        }
    }

    /// Removes the entries named `file` (`entryName(of:)`), and thumbnailers' failure marks.
    public func remove(_ file: String) {
        for size in Self.sizes { unlink(folder + "/\(size.folder)/" + file) }
        removeFailures(file)
    }

    /// Removes the failure marks thumbnailers left under `fail/<program>/` for `file`.
    public func removeFailures(_ file: String) {
        let fail = folder + "/fail"
        for program in (try? FileManager.default.contentsOfDirectory(atPath: fail)) ?? [] {
            unlink(fail + "/" + program + "/" + file)
        }
    }
}
