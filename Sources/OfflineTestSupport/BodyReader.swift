import Foundation
import Glibc

/// The open body of one answer: reads any offset into a buffer. A file is opened per answer
/// so a test can replace it between requests.
enum BodyReader {
    case bytes(Data)
    case generated(GeneratedBytes)
    case file(fd: Int32)

    /// Opens `body`, returning the reader, its length and (for files) the mtime in
    /// nanoseconds; `nil` when the file cannot be opened.
    static func open(_ body: Resource.Body) -> (reader: BodyReader, length: Int64, modified: Int64)? {
        switch body {
        case .bytes(let data):
            return (.bytes(data), Int64(data.count), 0)
        case .generated(let size, let seed):
            return (.generated(GeneratedBytes(size: size, seed: seed)), size, 0)
        case .file(let path):
            let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { return nil }
            var info = stat()
            guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
                Glibc.close(fd)
                return nil
            }
            let modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
            return (.file(fd: fd), Int64(info.st_size), modified)
        }
    }

    /// Fills `buffer` with the bytes at `offset`; false if a file got shorter meanwhile.
    func fill(from offset: Int64, into buffer: UnsafeMutableRawBufferPointer) -> Bool {
        switch self {
        case .bytes(let data):
            let start = data.startIndex + Int(offset)
            data.copyBytes(to: buffer.bindMemory(to: UInt8.self), from: start..<start + buffer.count)
            return true
        case .generated(let generator):
            generator.fill(from: offset, into: buffer)
            return true
        case .file(let fd):
            guard let base = buffer.baseAddress else { return true }
            var done = 0
            while done < buffer.count {
                let count = pread(fd, base + done, buffer.count - done, off_t(offset) + off_t(done))
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return false }
                done += count
            }
            return true
        }
    }

    func close() {
        if case .file(let fd) = self { Glibc.close(fd) }
    }
}
