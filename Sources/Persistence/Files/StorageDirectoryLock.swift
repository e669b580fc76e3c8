#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import SegmentsDomain

/// The advisory lock that makes one process at a time the owner of a storage directory (see Behaviour P5):
/// an exclusive `flock` on `owner.lock` inside it, held as long as this object lives.
///
/// The kernel drops the lock when the process ends, however it ends, so a crash never leaves a
/// directory locked. Within one process, hand the same instance to every user of the directory:
/// two descriptors of one process exclude each other too.
package final class StorageDirectoryLock: Sendable {
    /// The lock file's name inside the storage directory.
    package static let fileName = "owner.lock"

    private let fd: Int32

    private init(fd: Int32) {
        self.fd = fd
    }

    deinit {
        // Closing the last descriptor of the open file releases the flock.
        _ = close(fd)
    }

    /// Takes the lock of `directory` (created owner-only when missing, unless `creating` is false)
    /// without waiting.
    ///
    /// - Throws: ``SegmentsError`` `.storage` when another process holds it ("in use by another
    ///   process"), or when the lock file cannot be opened (a missing directory, when not
    ///   `creating`). Messages never name the directory.
    package static func acquire(_ directory: URL, creating: Bool = true) throws -> StorageDirectoryLock {
        let storage = StorageDirectory(url: directory)
        if creating { try storage.create() }
        let path = storage.path(of: fileName)
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, POSIXFile.fileMode)
        guard fd >= 0 else {
            throw SegmentsError(.storage, "The storage directory's lock file could not be opened (errno \(errno))")
        }
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            _ = close(fd)
            if code == EWOULDBLOCK {
                throw SegmentsError(
                    .storage,
                    "The storage directory is in use by another process (it holds \(fileName)); one process at a time may use a storage directory. Stop the other process or use another directory")
            }
            throw SegmentsError(.storage, "The storage directory could not be locked (errno \(code))")
        }
        return StorageDirectoryLock(fd: fd)
    }
}
