import Foundation
import Logging
import OfflineFUSE
import Synchronization

/// How one open of an item's media reads.
enum MediaIO: Hashable, Sendable {
    /// In the kernel, straight from the cache file (FUSE passthrough): no request reaches the
    /// mount, so a cached item reads as fast as its cache file.
    case passthrough(BackingFile)
    /// Through the kernel's page cache of the mount's file (`keep_cache` when whole).
    case pageCache
    /// `direct_io`: each read comes to the mount and is answered into the reader's buffer,
    /// skipping the page cache (bytes that are still arriving are copied once less).
    case direct
}

/// Chooses each media open's `MediaIO`, and keeps the one backing registration every
/// passthrough open of an item shares.
///
/// The kernel's rules (fs/fuse/iomode.c): all passthrough opens of an inode use one backing
/// file, and while any is open a page-cache open of the inode fails (and the reverse), with
/// `EIO` to the program. `direct_io` opens mix with both, except that mmapping one puts the
/// inode in page-cache mode. So: passthrough only when no other open of the media is left
/// (an mmap keeps its open until `munmap`), and a later open that cannot pass through goes
/// `direct_io` while passthrough opens remain. The counts here are never below the kernel's:
/// an open counts from its reply, and the kernel has dropped a file before its RELEASE arrives.
final class PassthroughFiles: Sendable {
    private struct Media {
        var backing: BackingFile?
        var passthroughOpens = 0
        var otherOpens = 0
    }
    private struct State {
        var backingFiles: BackingFiles?
        /// Set after a registration failed (no CAP_SYS_ADMIN, a cache on a filesystem stacked
        /// too deep …): the same would happen to every file, so stop trying.
        var disabled = false
        var media: [Int64: Media] = [:]
    }
    private let state = Mutex(State())  // leaf lock (held across open(2) and one ioctl)
    private let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    /// Passthrough opens become possible once the session's INIT granted them.
    func attach(_ backingFiles: BackingFiles) {
        state.withLock { $0.backingFiles = backingFiles }
    }

    /// The mode of a new open of `itemID`'s media.
    /// - Parameters:
    ///   - whole: every byte is in the cache file at `path`.
    ///   - mayPassThrough: reads need not reach the mount (none is watched, e.g. by a licence's
    ///     play clock).
    func open(itemID: Int64, whole: Bool, mayPassThrough: Bool, path: String) -> MediaIO {
        let (mode, failure) = state.withLock { state -> (MediaIO, Errno?) in
            var media = state.media[itemID] ?? Media()
            defer { state.media[itemID] = media }
            if whole, mayPassThrough, media.otherOpens == 0, !state.disabled,
               let files = state.backingFiles, files.isPassthroughAvailable {
                if media.backing == nil {
                    let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
                    if fd >= 0 {
                        defer { Glibc.close(fd) }  // the kernel keeps its own reference
                        switch files.register(descriptor: fd) {
                        case .success(let backing): media.backing = backing
                        case .failure(let errno):
                            state.disabled = true
                            media.otherOpens += 1
                            return (.pageCache, errno)
                        }
                    }
                }
                if let backing = media.backing {
                    media.passthroughOpens += 1
                    return (.passthrough(backing), nil)
                }
            }
            media.otherOpens += 1
            let direct = media.passthroughOpens > 0
                || (!whole && state.backingFiles?.granted.contains(.directIOMmap) == true)
            return (direct ? .direct : .pageCache, nil)
        }
        if let failure {
            logger.info("cached items are read through the mount, not passed through to their cache files: registering \(path) as a backing file failed (\(failure))")
        }
        return mode
    }

    /// The last close of an open that `open` answered with `mode`.
    func close(itemID: Int64, mode: MediaIO) {
        let unregister = state.withLock { state -> (BackingFile, BackingFiles)? in
            guard var media = state.media[itemID] else { return nil }
            if case .passthrough = mode { media.passthroughOpens -= 1 } else { media.otherOpens -= 1 }
            guard media.passthroughOpens <= 0 && media.otherOpens <= 0 else {
                state.media[itemID] = media
                return nil
            }
            state.media[itemID] = nil
            guard let backing = media.backing, let files = state.backingFiles else { return nil }
            return (backing, files)
        }
        if let (backing, files) = unregister, let errno = files.unregister(backing) {
            logger.warning("unregistering backing file \(backing.id) of item \(itemID) failed: \(errno)")
        }
    }
}
