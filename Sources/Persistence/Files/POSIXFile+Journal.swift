#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import SegmentsDomain

/// The calls that let the event journal take appends before it has been read (<doc:Behaviour#R1>,
/// <doc:Behaviour#R3>).
extension POSIXFile {
    /// Opens the journal for appending without reading a byte of it (<doc:Behaviour#R1>,
    /// <doc:Behaviour#R3>), creating it owner-only when it does not exist, then `fstat`s it. With
    /// `tellingCreation`, an `open` and, when it found nothing, an `open(O_CREAT | O_EXCL)`, so
    /// `created` says whether this call created the file; without, one `open(O_CREAT)`, and
    /// `created` means the file is empty (created now, or by a run that died before writing to it).
    ///
    /// Returns the descriptor, the file's length and `created` (the directory entry of a created
    /// file needs a directory sync to survive a power cut), or `nil` when the file must not be
    /// written before it was examined: a symbolic link, a FIFO, socket, device or directory,
    /// another user's file, a file with more than one name (a hard link), or one over
    /// `maximumSize` (<doc:Behaviour#P7>).
    static func openJournalForAppending(_ path: String, maximumSize: Int, tellingCreation: Bool) throws -> (
        fd: Int32, size: Int, created: Bool
    )? {
        let flags = O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK
        var created = false
        var fd: Int32
        if tellingCreation {
            fd = injected(.open, path) ?? open(path, flags)
            FileOperationLog.record(path) { $0.opens += 1 }
            if fd < 0, errno == ENOENT {
                fd = injected(.open, path) ?? open(path, flags | O_CREAT | O_EXCL, fileMode)
                FileOperationLog.record(path) { $0.opens += 1; $0.creations += 1 }
                created = fd >= 0
            }
        } else {
            fd = injected(.open, path) ?? open(path, flags | O_CREAT, fileMode)
            FileOperationLog.record(path) { $0.opens += 1; $0.creations += 1 }
        }
        if fd < 0 {
            let code = errno
            // ELOOP: a symbolic link. ENXIO: a FIFO without a reader, a socket (Linux) or a device
            // without a driver. EOPNOTSUPP: a socket (Darwin). EISDIR: a directory.
            if code == ELOOP || code == ENXIO || code == EOPNOTSUPP || code == EISDIR { return nil }
            throw failure("open", path, code: code)
        }
        var info = stat()
        guard fstat(fd, &info) == 0, UntrustedFile(info, maximumSize: maximumSize) == nil else {
            _ = close(fd)
            return nil
        }
        if info.st_size == 0 {
            // The umask may have removed bits from `fileMode` on creation; set it exactly.
            _ = fchmod(fd, fileMode)
            if !tellingCreation { created = true }
        }
        return (fd, Int(info.st_size), created)
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
        let fd = injected(.open, path) ?? open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        FileOperationLog.record(path) { $0.opens += 1 }
        guard fd >= 0 else { throw failure("open", path) }
        defer { _ = close(fd) }
        var data = Data(count: range.count)
        var filled = 0
        while filled < range.count {
            let count = data.withUnsafeMutableBytes { buffer in
                injected(.read, path).map(Int.init)
                    ?? pread(fd, buffer.baseAddress! + filled, range.count - filled, off_t(range.lowerBound + filled))
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure("read", path)
            }
            FileOperationLog.record(path) { $0.reads += 1; $0.bytesRead += count }
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
