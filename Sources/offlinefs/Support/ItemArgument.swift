import Foundation
import OfflineFUSE

/// An item reference as typed. A path relative to the current folder that names a file of a
/// mounted library (`cd ~/Media/sources/acme; offlinefs download *.mp4`) becomes its path in
/// the mount, which the engine resolves like any path in it; ids, source/content-ids and
/// other paths go as given.
enum ItemArgument {
    static func inMount(_ reference: String) -> String {
        guard !reference.isEmpty, !reference.hasPrefix("/") else { return reference }
        let absolute = MountTable.absolute(reference)
        let roots = MountTable.entries().filter { $0.type == "fuse.offlinefs" && absolute.hasPrefix($0.mountpoint + "/") }
        guard let root = roots.map(\.mountpoint).max(by: { $0.count < $1.count }),
              FileManager.default.fileExists(atPath: absolute) else { return reference }
        return String(absolute.dropFirst(root.count + 1))
    }
}
