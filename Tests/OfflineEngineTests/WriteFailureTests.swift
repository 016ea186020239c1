import GRDB
@testable import OfflineEngine
import Testing

/// What a failed write of cached bytes is: a shortage of space, whether the cache file or
/// the store's commit ran out, is one the file recovers from once space returns
/// (`CachedFile.failWrites`); any other failure sticks until the mount restarts.
@Suite struct WriteFailureTests {
    @Test func aStoreCommitThatFindsTheDiskFullIsAShortageOfSpace() {
        let full = CachedFile.writeFailure(DatabaseError(resultCode: .SQLITE_FULL, message: "database or disk is full"), path: "c/1/media")
        #expect(full.reason == .noSpace)
        let corrupt = CachedFile.writeFailure(DatabaseError(resultCode: .SQLITE_CORRUPT, message: "malformed"), path: "c/1/media")
        #expect(corrupt.reason == nil)
    }
}
