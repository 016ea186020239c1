import CGdkPixbuf
import Foundation

/// An image through gdk-pixbuf: decoded and scaled on the way in, saved as PNG with text
/// chunks. A thin typed layer: errors carry gdk-pixbuf's message.
public final class ThumbnailImage {
    private let pixbuf: OpaquePointer

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    private init(_ pixbuf: OpaquePointer) {
        self.pixbuf = pixbuf
    }

    deinit { cgdk_release(pixbuf) }

    public var width: Int { Int(gdk_pixbuf_get_width(pixbuf)) }
    public var height: Int { Int(gdk_pixbuf_get_height(pixbuf)) }

    /// The image in the file at `path` (JPEG, PNG …), scaled down to fit `maxSide` pixels,
    /// aspect kept; never scaled up.
    public static func load(_ path: String, fittingIn maxSide: Int) throws(Failure) -> ThumbnailImage {
        var width: Int32 = 0, height: Int32 = 0
        guard gdk_pixbuf_get_file_info(path, &width, &height) != nil else {
            throw Failure(description: "\(path): not an image gdk-pixbuf reads")
        }
        let side = Int32(maxSide)
        var error: UnsafeMutablePointer<GError>?
        let loaded = width <= side && height <= side
            ? gdk_pixbuf_new_from_file(path, &error)
            : gdk_pixbuf_new_from_file_at_scale(path, side, side, 1, &error)
        guard let loaded else {
            defer { cgdk_error_free(error) }
            throw Failure(description: "\(path): \(String(cString: cgdk_error_message(error)))")
        }
        return ThumbnailImage(loaded)
    }

    /// A PNG file's image, for its text chunks (`option`).
    public static func read(_ path: String) throws(Failure) -> ThumbnailImage {
        var error: UnsafeMutablePointer<GError>?
        guard let loaded = gdk_pixbuf_new_from_file(path, &error) else {
            defer { cgdk_error_free(error) }
            throw Failure(description: "\(path): \(String(cString: cgdk_error_message(error)))")
        }
        return ThumbnailImage(loaded)
    }

    /// A text chunk the file had (`tEXt::Thumb::URI`), when read by `read`.
    public func option(_ key: String) -> String? {
        gdk_pixbuf_get_option(pixbuf, key).map { String(cString: $0) }
    }

    /// Saves as PNG at `path` with `text` as `tEXt` chunks (`Thumb::URI` → `tEXt::Thumb::URI`).
    public func savePNG(_ path: String, text: [(String, String)]) throws(Failure) {
        let keys = text.map { strdup("tEXt::" + $0.0) } + [nil]
        let values = text.map { strdup($0.1) } + [nil]
        defer {
            keys.forEach { free($0) }
            values.forEach { free($0) }
        }
        var error: UnsafeMutablePointer<GError>?
        var mutableKeys = keys, mutableValues = values
        let saved = gdk_pixbuf_savev(pixbuf, path, "png", &mutableKeys, &mutableValues, &error)
        guard saved != 0 else {
            defer { cgdk_error_free(error) }
            throw Failure(description: "\(path): \(String(cString: cgdk_error_message(error)))")
        }
    }
}

/// What the freedesktop.org thumbnail standard names by GLib's functions: a file's URI and
/// the MD5 that names its thumbnail.
public enum ThumbnailNaming {
    /// `file:///…` as `g_filename_to_uri` escapes it (the URI file managers look up).
    public static func uri(ofPath path: String) -> String? {
        guard let uri = g_filename_to_uri(path, nil, nil) else { return nil }
        defer { cgdk_free(uri) }
        return String(cString: uri)
    }

    /// The thumbnail's file name: the MD5 of the URI, in hex, with `.png`.
    public static func fileName(forURI uri: String) -> String {
        let digest = g_compute_checksum_for_string(G_CHECKSUM_MD5, uri, -1)!
        defer { cgdk_free(digest) }
        return String(cString: digest) + ".png"
    }
}
