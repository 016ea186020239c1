/// Decides an item's `MediaType` from what the feed says (DESIGN §1, brief rule 4).
enum MediaTypeGuess {
    private static let hlsMIMETypes: Set<String> = [
        "application/vnd.apple.mpegurl", "application/x-mpegurl", "audio/mpegurl", "audio/x-mpegurl",
    ]
    private static let videoExtensions: Set<String> = ["mp4", "m4v", "mkv", "webm", "mov", "avi", "mpg", "mpeg", "ts", "ogv"]
    private static let audioExtensions: Set<String> = ["mp3", "m4a", "aac", "ogg", "oga", "opus", "flac", "wav", "m4b"]

    /// - Parameters:
    ///   - mimeType: the feed's MIME type, parameters allowed (`video/mp4; codecs=…`).
    ///   - url: the absolute media URL.
    ///   - medium: Media RSS `medium` (`video`, `audio` …), a hint when the MIME type says nothing.
    static func guess(mimeType: String?, url: String, medium: String? = nil) -> MediaType {
        let mime = mimeType.map(essence)
        let ext = pathExtension(of: url)
        if let mime, hlsMIMETypes.contains(mime) { return .hls }
        if ext == "m3u8" { return .hls }
        if let mime {
            if mime.hasPrefix("video/") { return .video }
            if mime.hasPrefix("audio/") { return .audio }
            if mime != "application/octet-stream" && mime != "binary/octet-stream" { return .file }
        }
        switch medium?.lowercased() {
        case "video": return .video
        case "audio": return .audio
        default: break
        }
        if let ext {
            if videoExtensions.contains(ext) { return .video }
            if audioExtensions.contains(ext) { return .audio }
        }
        return .file
    }

    /// `Video/MP4; codecs="avc1"` → `video/mp4`.
    static func essence(_ mimeType: String) -> String {
        let base = mimeType.utf8.firstIndex(of: UInt8(ascii: ";")).map { String(Substring(mimeType.utf8[..<$0])) } ?? mimeType
        return FeedText.trimmed(base).lowercased()
    }

    /// Lowercased extension of the URL's path (query and fragment ignored), if any.
    static func pathExtension(of url: String) -> String? {
        let utf8 = url.utf8
        let end = utf8.firstIndex { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? utf8.endIndex
        let path = utf8[..<end]
        guard let slash = path.lastIndex(of: UInt8(ascii: "/")) else { return nil }
        let name = path[path.index(after: slash)...]
        guard let dot = name.lastIndex(of: UInt8(ascii: ".")), dot != name.startIndex else { return nil }
        let ext = name[name.index(after: dot)...]
        guard !ext.isEmpty, ext.count <= 8 else { return nil }
        return String(Substring(ext)).lowercased()
    }
}
