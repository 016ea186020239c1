import CCryptoShim
import Glibc

/// SHA-256 from the system libcrypto (OpenSSL EVP), for verifying downloads against the
/// catalog's checksum.
public enum SHA256Digest {
    /// Lowercase hex SHA-256 of the first `length` bytes of the file at `path`.
    public static func hex(ofFileAt path: String, length: Int64) throws -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CacheFileError(errno: errno, operation: "open", path: path) }
        defer { close(fd) }
        return try hex(ofDescriptor: fd, length: length, path: path)
    }

    static func hex(ofDescriptor fd: Int32, length: Int64, path: String) throws(CacheFileError) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        let result = ccrypto_sha256_fd(fd, off_t(length), &digest)
        guard result == 0 else {
            throw CacheFileError(errno: result > 0 ? result : EIO, operation: "sha256", path: path)
        }
        return hex(digest)
    }

    /// Lowercase hex SHA-256 of `bytes`.
    public static func hex(of bytes: UnsafeRawBufferPointer) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        var size: UInt32 = 0
        _ = EVP_Digest(bytes.baseAddress, bytes.count, &digest, &size, EVP_sha256(), nil)
        return hex(digest)
    }

    private static func hex(_ digest: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(64)
        for byte in digest {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
