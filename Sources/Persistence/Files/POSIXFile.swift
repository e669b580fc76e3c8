#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import SegmentsDomain

/// The few POSIX file calls the stores need, with `errno` turned into ``SegmentsError``.
///
/// POSIX rather than `FileHandle` because the durable operations (`fsync`, `O_EXCL` creation with
/// an explicit mode, `ftruncate`) are either missing from `FileHandle` before macOS 10.15.4 / iOS 13.4
/// or hide the `errno` we need to tell "missing" from "unreadable".
enum POSIXFile {
    /// Owner read/write: every file the stores create (<doc:Behaviour#P1>).
    static let fileMode = mode_t(0o600)
    /// Owner only: directories the stores create.
    static let directoryMode = mode_t(0o700)

    /// Creates a new file that must not exist yet, owner-only whatever the umask, open for writing.
    static func createExclusive(_ path: String) throws -> Int32 {
        let fd = injected(.open, path) ?? open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, fileMode)
        FileOperationLog.record(path) { $0.opens += 1; $0.creations += 1 }
        guard fd >= 0 else { throw failure("create", path) }
        // The umask may have removed bits from `fileMode`; set it exactly.
        _ = fchmod(fd, fileMode)
        return fd
    }

    /// The largest baseline or visitor file read: 8 MiB (3 × 1,000 segments take ~200 KB). The
    /// customer file's cap is far smaller (`FileCustomerStore.maximumFileSize`).
    static let maximumDocumentSize = 8 << 20
    /// The largest event queue journal read: 48 MiB, the default capacity of 100,000 items at
    /// ~500 bytes each (a typical event with six properties takes ~370 bytes on disk, 37 MB at
    /// capacity; Docs/Reliability.md has the derivation). A bigger file is set aside unread
    /// (<doc:Behaviour#P7>), so reading never costs more than this in file bytes, whatever the file
    /// holds.
    static let maximumJournalSize = 48 << 20
    /// Appends stop where the journal would pass this: the cap less 1 MiB, kept for the update
    /// and remove lines (and the rewrite they may need) of items already queued, so an upload's
    /// outcome can always be recorded (<doc:Behaviour#E6>, <doc:Behaviour#P7>).
    static let journalAppendLimit = maximumJournalSize - (1 << 20)

    /// Opens an existing file for appending; a symbolic link is refused, not followed.
    static func openForAppending(_ path: String) throws -> Int32 {
        let fd = injected(.open, path) ?? open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW)
        FileOperationLog.record(path) { $0.opens += 1 }
        guard fd >= 0 else { throw failure("open", path) }
        return fd
    }

    /// The whole content of the file, or `nil` when it does not exist (<doc:Behaviour#P7>).
    ///
    /// The file is untrusted: another process of the user, a backup restore or a bug may have put
    /// anything there. It is opened without following a symbolic link and without blocking (a FIFO
    /// would hang the caller), and read only when it is a regular file owned by this user and at
    /// most `maximumSize` bytes (a huge sparse file would exhaust memory), with one name only (a
    /// hard link may make it another file's).
    ///
    /// - Throws: ``UntrustedFile`` for a file that must be set aside unread; ``SegmentsError``
    ///   `.storage` when the system refuses.
    static func contents(of path: String, maximumSize: Int = maximumDocumentSize) throws -> Data? {
        let fd = injected(.open, path) ?? open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        FileOperationLog.record(path) { $0.opens += 1 }
        if fd < 0 {
            let code = errno
            if code == ENOENT { return nil }
            // ELOOP: the name is a symbolic link. ENXIO: a socket (Linux), or a device without a
            // driver. EOPNOTSUPP: a socket (Darwin's open(2) refuses sockets with it).
            if code == ELOOP { throw UntrustedFile.symbolicLink }
            if code == ENXIO || code == EOPNOTSUPP { throw UntrustedFile.notARegularFile }
            throw failure("open", path, code: code)
        }
        defer { _ = close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw failure("stat", path) }
        if let problem = UntrustedFile(info, maximumSize: maximumSize) { throw problem }
        let expected = Int(info.st_size)
        var data = Data(count: max(expected, 0) + 1)
        var filled = 0
        while true {
            // The file may grow while it is read; the cap holds whatever the size said.
            if filled > maximumSize { throw UntrustedFile.tooLarge }
            if filled == data.count { data.count += min(max(data.count, 4096), maximumSize + 1) }
            let count = data.withUnsafeMutableBytes { buffer in
                injected(.read, path).map(Int.init) ?? read(fd, buffer.baseAddress! + filled, buffer.count - filled)
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure("read", path)
            }
            FileOperationLog.record(path) { $0.reads += 1; $0.bytesRead += count }
            if count == 0 { break }
            filled += count
        }
        data.count = filled
        return data
    }

    /// Writes every byte of `data`, retrying short writes and interruptions.
    static func writeAll(_ fd: Int32, _ data: Data, path: String) throws {
        try data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
            guard let base = buffer.baseAddress else { return }
            var written = 0
            while written < buffer.count {
                let count = injected(.write, path).map(Int.init) ?? write(fd, base + written, buffer.count - written)
                if count < 0 {
                    if errno == EINTR { continue }
                    throw failure("write", path)
                }
                FileOperationLog.record(path) { $0.writes += 1; $0.bytesWritten += count }
                written += count
            }
        }
    }

    /// Flushes the file's data to stable storage (<doc:Behaviour#R2>): tries the calls of `plan` in
    /// order and stops at the first that succeeds. `perform` is the system call; tests replace it.
    static func sync(
        _ fd: Int32, path: String, plan: [SyncCall] = SyncCall.platformPlan,
        perform: (SyncCall, Int32) -> Int32 = SyncCall.perform
    ) throws {
        var result: Int32 = -1
        for call in plan {
            result = perform(call, fd)
            if result == 0 { break }
        }
        FileOperationLog.record(path) { $0.syncs += 1 }
        guard result == 0 else { throw failure("sync", path) }
    }

    /// Makes a rename or a new name in `directory` durable, by `plan`'s calls in order until one
    /// succeeds: on Darwin `F_FULLFSYNC` first, as for files, since Darwin's `fsync` stops at the
    /// drive's cache and a power cut could bring back the name a rename replaced (a logged-out
    /// customer's file). Best effort: not every file system lets a directory be opened or synced,
    /// and the rename itself is already atomic. `perform` is the system call; tests replace it.
    static func syncDirectory(
        _ directory: String, plan: [SyncCall] = SyncCall.platformDirectoryPlan,
        perform: (SyncCall, Int32) -> Int32 = SyncCall.perform
    ) {
        let fd = open(directory, O_RDONLY | O_CLOEXEC)
        FileOperationLog.record(directory) { $0.directorySyncs += 1 }
        guard fd >= 0 else { return }
        for call in plan where perform(call, fd) == 0 { break }
        _ = close(fd)
    }

    /// Cuts the file back to `size` bytes: drops a record whose write failed half-way. Returns
    /// whether it worked.
    @discardableResult
    static func cut(_ fd: Int32, to size: Int, path: String) -> Bool {
        FileOperationLog.record(path) { $0.truncations += 1 }
        if injected(.truncate, path) != nil { return false }
        return ftruncate(fd, off_t(size)) == 0
    }

    /// Closes a descriptor; errors are ignored because every write that matters was synced.
    static func closeQuietly(_ fd: Int32) {
        if fd >= 0 { _ = close(fd) }
    }

    /// Atomically replaces `path` with `source`.
    static func move(_ source: String, over path: String) throws {
        FileOperationLog.record(path) { $0.renames += 1 }
        guard (injected(.rename, path) ?? rename(source, path)) == 0 else { throw failure("rename", path) }
    }

    /// Removes a file; a missing file is not an error.
    static func delete(_ path: String) {
        _ = unlink(path)
    }

    /// Gives `path` a second name without copying its bytes.
    static func hardLink(_ path: String, to newPath: String) throws {
        FileOperationLog.record(path) { $0.links += 1 }
        guard (injected(.link, path) ?? link(path, newPath)) == 0 else { throw failure("link", newPath) }
    }

    /// Test seam (see ``FileOperationLog``): when a test injected a failure of this `kind` of call on
    /// `path`, sets `errno` and returns what the call would (-1; 0 for a `write` that wrote
    /// nothing, or a `read` at the end of the file); `nil`, always outside tests, for the real call.
    static func injected(_ kind: FileOperationKind, _ path: String) -> Int32? {
        guard let code = FileOperationLog.injectedFailure(kind, path) else { return nil }
        errno = code
        return code == 0 && (kind == .write || kind == .read) ? 0 : -1
    }

    /// A storage error for the failed `operation`, naming only the file (never the directory, which
    /// may contain an integration id) and the system's reason.
    static func failure(_ operation: String, _ path: String, code: Int32 = errno) -> SegmentsError {
        let file = (path as NSString).lastPathComponent
        let reason = String(cString: strerror(code))
        // EPERM/EACCES on open, read or write: protected data is not available yet (see Behaviour P8).
        let underlying: any Error =
            ProtectedDataUnavailable.refuses(operation, code: code)
            ? ProtectedDataUnavailable(code: code) : SystemCallError(code: code)
        return SegmentsError(.storage, "\(operation) \(file) failed: \(reason)", underlying: underlying)
    }
}

/// One way to flush a file to stable storage; ``POSIXFile/sync(_:path:plan:perform:)`` tries a
/// platform's plan in order (<doc:Behaviour#R2>).
enum SyncCall: Hashable, Sendable {
    /// `fcntl(F_FULLFSYNC)`, Darwin only: reaches the drive's media, as Darwin's `fsync` does not
    /// (it stops at the drive's volatile cache). Elsewhere it fails with `ENOTSUP`.
    case fullFsync
    /// `fsync`: for Darwin file systems that refuse `F_FULLFSYNC` (some network volumes).
    case fsync
    /// `fdatasync`: the data and the new size, all a reader needs; cheaper than `fsync`.
    case fdatasync

    /// The calls tried on Darwin (`darwin`) or elsewhere. The journal's group commit pays for the
    /// sync once per batch, off the caller's thread, so `F_FULLFSYNC`'s cost is paid rarely.
    static func plan(darwin: Bool) -> [SyncCall] { darwin ? [.fullFsync, .fsync] : [.fdatasync] }

    /// The calls tried for a directory: `F_FULLFSYNC` then `fsync` on Darwin, `fsync` elsewhere
    /// (a directory's entries are what a rename changes; `fdatasync` need not write them).
    static func directoryPlan(darwin: Bool) -> [SyncCall] { darwin ? [.fullFsync, .fsync] : [.fsync] }

    /// This platform's plan for directories.
    static var platformDirectoryPlan: [SyncCall] {
        #if canImport(Darwin)
        directoryPlan(darwin: true)
        #else
        directoryPlan(darwin: false)
        #endif
    }

    /// This platform's plan.
    static var platformPlan: [SyncCall] {
        #if canImport(Darwin)
        plan(darwin: true)
        #else
        plan(darwin: false)
        #endif
    }

    /// Makes the system call; `-1` with `errno` set on failure.
    static func perform(_ call: SyncCall, _ fd: Int32) -> Int32 {
        switch call {
        case .fullFsync:
            #if canImport(Darwin)
            return fcntl(fd, F_FULLFSYNC)
            #else
            errno = ENOTSUP
            return -1
            #endif
        case .fsync: return Foundation.fsync(fd)
        case .fdatasync:
            #if canImport(Darwin)
            return Foundation.fsync(fd)  // Darwin's fdatasync is not public API before macOS 11
            #else
            return Foundation.fdatasync(fd)
            #endif
        }
    }
}

/// Why a stored file is set aside without being read (<doc:Behaviour#P7>, <doc:Behaviour#P2>).
enum UntrustedFile: Error, Hashable, Sendable {
    /// The name is a symbolic link: following it would read (or, later, replace) another file.
    case symbolicLink
    /// A FIFO, socket, device or directory.
    case notARegularFile
    /// Owned by another user.
    case foreignOwner
    /// Larger than the size cap.
    case tooLarge
    /// The file has more than one name (`st_nlink > 1`): a hard link planted in the storage
    /// directory would let the SDK read, and append to, a file that lives elsewhere too.
    case hardLinked

    /// What is wrong with the file `info` describes (from `fstat` on the open descriptor, so it
    /// is the file that will be read), or `nil` for a regular file of this user with one name,
    /// at most `maximumSize` bytes.
    init?(_ info: stat, maximumSize: Int) {
        if (info.st_mode & S_IFMT) != S_IFREG {
            self = .notARegularFile
        } else if info.st_uid != geteuid() {
            self = .foreignOwner
        } else if info.st_nlink > 1 {
            self = .hardLinked
        } else if info.st_size > maximumSize {
            self = .tooLarge
        } else {
            return nil
        }
    }
}

/// An `errno` value: the underlying error of storage failures.
struct SystemCallError: Error, Hashable, Sendable {
    /// The `errno` the call set.
    let code: Int32
}
