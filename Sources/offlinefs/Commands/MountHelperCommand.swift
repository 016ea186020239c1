import ArgumentParser
import Foundation
import OfflineMount

/// `offlinefs mount-helper`: what `/sbin/mount.fuse.offlinefs` runs (hidden: people use
/// `mount -t fuse.offlinefs` or `offlinefs mount`).
struct MountHelperCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mount-helper",
        abstract: "Run by mount(8) through mount.fuse.offlinefs: <library> <mountpoint> [-sfnv] [-o options].",
        shouldDisplay: false)

    @Argument(parsing: .allUnrecognized) var arguments: [String] = []

    func run() throws {
        let request: MountHelper.Request
        do {
            request = try MountHelper.parse(arguments)
        } catch {
            throw ValidationError(error.description)
        }
        let mountArguments = MountHelper.mountArguments(request)
        if request.verbose { print("offlinefs " + mountArguments.joined(separator: " ")) }
        if request.fake { return }
        // Runs `offlinefs mount` in this process: it daemonizes once mounted, so mount(8)
        // returns when the mount is up.
        var command = try OfflineFS.parseAsRoot(mountArguments)
        try command.run()
    }
}
