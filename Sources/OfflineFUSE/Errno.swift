#if canImport(Glibc)
import Glibc
#endif

/// An error number a FUSE request is answered with (`fuse_reply_err`).
///
/// The one place where the binding turns errors into kernel answers: `Errno(converting:)`
/// passes an `Errno` through and maps anything else to `EIO`, so an unexpected Swift error
/// never reaches the kernel as a meaningless code.
public struct Errno: Error, Hashable, Sendable, RawRepresentable, CustomStringConvertible {
    /// The C error number, positive (`ENOENT`, not `-ENOENT`).
    public let rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }
    public init(_ code: Int32) { self.rawValue = code }

    /// Converts any error into the errno sent to the kernel: an `Errno` as is, anything else `EIO`.
    public init(converting error: any Error) {
        self = (error as? Errno) ?? .ioError
    }

    /// The corresponding C error is `EPERM`.
    public static let notPermitted = Errno(EPERM)
    /// The corresponding C error is `ENOENT`.
    public static let noSuchFileOrDirectory = Errno(ENOENT)
    /// The corresponding C error is `EINTR`: the answer to an interrupted request.
    public static let interrupted = Errno(EINTR)
    /// The corresponding C error is `EIO`.
    public static let ioError = Errno(EIO)
    /// The corresponding C error is `EBADF`.
    public static let badFileDescriptor = Errno(EBADF)
    /// The corresponding C error is `EAGAIN`.
    public static let resourceTemporarilyUnavailable = Errno(EAGAIN)
    /// The corresponding C error is `ENOMEM`.
    public static let noMemory = Errno(ENOMEM)
    /// The corresponding C error is `EACCES`.
    public static let permissionDenied = Errno(EACCES)
    /// The corresponding C error is `EBUSY`.
    public static let resourceBusy = Errno(EBUSY)
    /// The corresponding C error is `EEXIST`.
    public static let fileExists = Errno(EEXIST)
    /// The corresponding C error is `EXDEV`.
    public static let improperLink = Errno(EXDEV)
    /// The corresponding C error is `ENOTDIR`.
    public static let notDirectory = Errno(ENOTDIR)
    /// The corresponding C error is `EISDIR`.
    public static let isDirectory = Errno(EISDIR)
    /// The corresponding C error is `EINVAL`.
    public static let invalidArgument = Errno(EINVAL)
    /// The corresponding C error is `EFBIG`.
    public static let fileTooLarge = Errno(EFBIG)
    /// The corresponding C error is `ENOSPC`.
    public static let noSpace = Errno(ENOSPC)
    /// The corresponding C error is `EROFS`.
    public static let readOnlyFileSystem = Errno(EROFS)
    /// The corresponding C error is `ERANGE`: an xattr buffer too small for the value.
    public static let resultOutOfRange = Errno(ERANGE)
    /// The corresponding C error is `ENAMETOOLONG`.
    public static let fileNameTooLong = Errno(ENAMETOOLONG)
    /// The corresponding C error is `ENOSYS`. Never for xattr requests: the kernel then
    /// disables extended attributes for the whole mount.
    public static let noFunction = Errno(ENOSYS)
    /// The corresponding C error is `ENOTEMPTY`.
    public static let directoryNotEmpty = Errno(ENOTEMPTY)
    /// The corresponding C error is `ENODATA`: no such extended attribute.
    public static let noData = Errno(ENODATA)
    /// The corresponding C error is `ETIMEDOUT`.
    public static let timedOut = Errno(ETIMEDOUT)
    /// The corresponding C error is `ENOTSUP` (same value as `EOPNOTSUPP` on Linux).
    public static let notSupported = Errno(ENOTSUP)
    /// The corresponding C error is `ENOTCONN`.
    public static let notConnected = Errno(ENOTCONN)
    /// The corresponding C error is `EKEYEXPIRED`: a rental licence has run out.
    public static let keyExpired = Errno(EKEYEXPIRED)

    public var description: String {
        if let text = strerror(rawValue) { return "\(String(cString: text)) (errno \(rawValue))" }
        return "errno \(rawValue)"
    }
}
