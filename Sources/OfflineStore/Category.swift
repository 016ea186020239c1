/// A library-wide category (`categories/<name>/<sub>/…` in the mount), shared by every source.
public struct Category: Sendable, Codable, Hashable, Identifiable {
    public var id: Int64
    /// The name as the feeds give it.
    public var name: String
    public var parentID: Int64?
    /// `name` sanitized for the file system and unique among its siblings; stable once stored.
    public var folderName: String
    /// Names from the root category down to this one.
    public var path: [String]
    /// Folder names from the root down to this one (the mount path under `categories/`).
    public var folderPath: [String]
}
