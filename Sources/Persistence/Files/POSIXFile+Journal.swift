#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import SegmentsDomain

/// The calls that let the event journal take appends before it has been read (see Behaviour R3).
extension POSIXFile {
    /// Opens an existing journal for appending without reading it, when that is safe: a regular
    /// file of this user, within `maximumSize`, ending with a complete line. Returns the
    /// descriptor and the file's length, or `nil` whenever the caller should take the full path
    /// (missing, untrusted or empty files, and a torn last line, which the full path cuts off
    /// after keeping any damaged file aside byte for byte).
    static func openTailForAppending(_ path: String, maximumSize: Int) -> (fd: Int32, size: Int)? {
        let fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        var info = stat()
        var last: UInt8 = 0
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_uid == geteuid(),
            info.st_size > 0, info.st_size <= maximumSize,
            pread(fd, &last, 1, info.st_size - 1) == 1, last == UInt8(ascii: "\n")
        else {
            _ = close(fd)
            return nil
        }
        return (fd, Int(info.st_size))
    }

    /// The first `length` bytes of the file at `path`, read through a new descriptor that does not
    /// follow a symbolic link. Throws when the file is shorter or unreadable.
    static func prefix(of path: String, length: Int) throws -> Data {
        try bytes(of: path, in: 0..<length)
    }

    /// The bytes of the file at `path` in `range`, through a new descriptor that does not follow a
    /// symbolic link.
    static func bytes(of path: String, in range: Range<Int>) throws -> Data {
        guard !range.isEmpty else { return Data() }
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { throw failure("open", path) }
        defer { _ = close(fd) }
        var data = Data(count: range.count)
        var filled = 0
        while filled < range.count {
            let count = data.withUnsafeMutableBytes { buffer in
                pread(fd, buffer.baseAddress! + filled, range.count - filled, off_t(range.lowerBound + filled))
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure("read", path)
            }
            if count == 0 { throw SegmentsError(.storage, "The event queue file is shorter than expected") }
            filled += count
        }
        return data
    }

    /// A second descriptor for the file `fd` is open on (`-1` on failure), so a sync can run
    /// without holding the lock that guards `fd`: a compaction may close the original meanwhile
    /// (syncing the old file is then harmless: the compaction synced the new one).
    static func duplicate(_ fd: Int32) -> Int32 {
        fd >= 0 ? dup(fd) : -1
    }
}
