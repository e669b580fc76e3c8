#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import SegmentsDomain

/// The advisory lock that makes one process at a time the owner of a storage directory
/// (<doc:Behaviour#P5>): an exclusive `flock` on `owner.lock` inside it, held as long as this
/// object lives.
///
/// The kernel drops the lock when the process ends, however it ends, so a crash never leaves a
/// directory locked. Within one process, hand the same instance to every user of the directory:
/// two descriptors of one process exclude each other too.
///
/// Before the device's first unlock the lock file may be refused like every protected file
/// (<doc:Behaviour#P8>): the lock is then taken later, by ``retryAfterProtectedData()``. Nothing in the
/// directory can be read or written by any process until then, so nothing can be damaged meanwhile.
/// A refusal while protected data is available (a lock file of mode 000, or owned by root after a
/// `sudo` run; a read-only folder) is a `.storage` error naming `owner.lock`: the directory is never
/// used without its lock.
package final class StorageDirectoryLock: Sendable {
    /// The lock file's name inside the storage directory.
    package static let fileName = "owner.lock"

    private let path: String
    /// The locked descriptor; -1 while the lock file was refused because protected data is not
    /// available.
    private let fd: Locked<Int32>
    /// Tells a refusal of the lock file that protected data explains from a storage error.
    private let refusals: StorageRefusals

    private init(path: String, fd: Int32, refusals: StorageRefusals) {
        self.path = path
        self.fd = Locked(fd)
        self.refusals = refusals
    }

    deinit {
        // Closing the last descriptor of the open file releases the flock.
        fd.withLock { if $0 >= 0 { _ = close($0) } }
    }

    /// Takes the lock of `directory` (created owner-only when missing, unless `creating` is false)
    /// without waiting: a lock found held is refused at once (see
    /// ``waitingOutMomentaryHolders(_:)``).
    ///
    /// When the lock file is refused while `refusals` says protected data is not available
    /// (<doc:Behaviour#P8>), the returned lock is not held yet: ``retryAfterProtectedData()`` takes it.
    ///
    /// - Throws: ``SegmentsError`` `.storage` when another process holds it ("in use by another
    ///   process"), or when the lock file cannot be opened: a missing directory, when not
    ///   `creating`; a refusal (`EACCES`/`EPERM`) while protected data is available, naming
    ///   `owner.lock`. Messages never name the directory.
    package static func acquire(
        _ directory: URL, creating: Bool = true, refusals: StorageRefusals = .unreported
    ) throws -> StorageDirectoryLock {
        let storage = StorageDirectory(url: directory)
        if creating { try storage.create() }
        let path = storage.path(of: fileName)
        do {
            return StorageDirectoryLock(path: path, fd: try lock(path), refusals: refusals)
        } catch {
            // One answer of the platform decides: transient, or a storage error.
            let settled = refusals.settled(error)
            guard ProtectedDataUnavailable.isProtectedDataUnavailable(settled) else { throw settled }
            return StorageDirectoryLock(path: path, fd: -1, refusals: refusals)
        }
    }

    /// Takes the lock that ``acquire(_:creating:refusals:)`` could not take because protected data
    /// was not available (<doc:Behaviour#P8>); nothing when it is held. Call it when protected data
    /// becomes available.
    ///
    /// - Throws: ``SegmentsError`` `.storage`: another process took the directory meanwhile, or the
    ///   lock file is refused (`isProtectedDataUnavailable` when protected data is still
    ///   unavailable).
    package func retryAfterProtectedData() throws {
        try fd.withLock { fd in
            guard fd < 0 else { return }
            do {
                fd = try Self.lock(path)
            } catch {
                throw refusals.settled(error)
            }
        }
    }

    /// Whether the lock is held: `false` only while its file is refused because protected data is
    /// not available (<doc:Behaviour#P8>).
    package var isHeld: Bool {
        fd.withLock { $0 >= 0 }
    }

    /// Opens `path` and locks it exclusively; returns the descriptor.
    private static func lock(_ path: String) throws -> Int32 {
        let fd = POSIXFile.injected(.open, path) ?? open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, POSIXFile.fileMode)
        guard fd >= 0 else {
            let code = errno
            let underlying: any Error =
                ProtectedDataUnavailable.refuses("open", code: code)
                ? ProtectedDataUnavailable(code: code) : SystemCallError(code: code)
            throw SegmentsError(
                .storage, "The storage directory's lock file (\(fileName)) could not be opened: \(String(cString: strerror(code)))",
                underlying: underlying)
        }
        while (POSIXFile.injected(.lock, path) ?? flock(fd, LOCK_EX | LOCK_NB)) != 0 {
            let code = errno
            if code == EINTR { continue }
            _ = close(fd)
            if code == EWOULDBLOCK {
                throw SegmentsError(
                    .storage,
                    "The storage directory is in use by another process (it holds \(fileName)); one process at a time may use a storage directory. Stop the other process or use another directory",
                    underlying: SystemCallError(code: code))
            }
            throw SegmentsError(.storage, "The storage directory could not be locked (errno \(code))")
        }
        return fd
    }

    /// Runs `attempt` — which takes a directory's lock with ``acquire(_:creating:)`` — again, 1 ms
    /// apart, while it fails because the lock is held, up to ``momentaryHolderAttempts`` times in
    /// all; its last error otherwise. Call it outside any lock: it may wait about 50 ms.
    ///
    /// A lock may be held for a moment by no other process at all: a child process that another
    /// thread of this process is starting holds a copy of every descriptor, this lock's too, from
    /// its `fork` (or Linux's `posix_spawn`) until its `exec` closes them, so a lock this process
    /// released a moment before is still held by that copy. Measured on Linux, the copy goes within
    /// 2 ms, and within 8 ms with the CPUs oversubscribed; a lock still held after 50 tries belongs
    /// to another process. Only a refused configure pays the whole wait.
    package static func waitingOutMomentaryHolders<Result>(_ attempt: () throws -> Result) throws -> Result {
        var attempts = 1
        while true {
            do {
                return try attempt()
            } catch let error as SegmentsError where error.isLockHeld && attempts < momentaryHolderAttempts {
                attempts += 1
                usleep(1_000)
            }
        }
    }

    /// How many times ``waitingOutMomentaryHolders(_:)`` tries a held lock.
    static let momentaryHolderAttempts = 50
}

extension SegmentsError {
    /// Whether a storage directory's lock was found held (by another process, or for a moment by
    /// a child process being started; see ``StorageDirectoryLock/waitingOutMomentaryHolders(_:)``).
    var isLockHeld: Bool {
        (underlying as? SystemCallError)?.code == EWOULDBLOCK
    }
}
