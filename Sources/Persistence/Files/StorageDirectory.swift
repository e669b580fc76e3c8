#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import SegmentsDomain

/// The storage directory of one integration and the file operations every store shares:
/// creating the directory, atomic replacement, and setting damaged files aside (<doc:Behaviour#P1>,
/// <doc:Behaviour#P2>).
///
/// Each store owns distinct file names in the directory and only ever touches its own names, so
/// the three stores can share one directory without coordinating.
struct StorageDirectory: Sendable {
    /// How many set-aside copies of one file are kept; older ones are deleted so a file that keeps
    /// getting damaged cannot fill the disk.
    static let keptCorruptCopies = 3
    /// The largest `<name>.corrupt-<n>` number taken into account; larger ones are not ours.
    static let largestCorruptNumber = 1_000_000_000

    /// The directory.
    let url: URL
    /// Fault injection for the stores' tests (a full disk cannot be had on demand): when set,
    /// ``replace(_:with:)`` fails with the `errno` it returns for the file's name, before writing.
    var simulatedWriteFailure: (@Sendable (_ name: String) -> Int32?)?

    /// The storage directory at `url`.
    init(url: URL, simulatedWriteFailure: (@Sendable (_ name: String) -> Int32?)? = nil) {
        self.url = url
        self.simulatedWriteFailure = simulatedWriteFailure
    }

    /// The directory's path.
    var path: String { url.path }

    /// The path of `name` inside the directory.
    func path(of name: String) -> String {
        url.appendingPathComponent(name, isDirectory: false).path
    }

    /// Creates the directory and any missing parent, each owner-only (0700). An existing
    /// directory is left as it is — it may be shared with the app and is not ours to re-permission —
    /// but it must belong to this user and must not be writable by its group or by every user
    /// (<doc:Behaviour#P7>): another user could otherwise replace the files the SDK trusts.
    ///
    /// The directory's own name must not be a symbolic link: a link there would let whoever
    /// can change it swap the whole folder, and following it means trusting a folder chosen by the
    /// link's author. Only the last component is checked: a symbolic link higher up the path is the
    /// platform's or the user's choice (`/var` → `/private/var` on macOS, a home directory on
    /// another volume) and is followed.
    ///
    /// - Throws: ``SegmentsError`` `.storage`; the message never names the directory.
    func create() throws {
        try Self.makeDirectory(path)
        var info = stat()
        guard lstat(path, &info) == 0 else { throw Self.directoryFailure("inspect", code: errno) }
        guard (info.st_mode & S_IFMT) != S_IFLNK else {
            throw SegmentsError(.storage, "The storage directory is a symbolic link; refusing to use it")
        }
        guard info.st_uid == geteuid() else {
            throw SegmentsError(.storage, "The storage directory belongs to another user; refusing to use it")
        }
        guard info.st_mode & S_IWOTH == 0 else {
            throw SegmentsError(.storage, "The storage directory is writable by every user; refusing to use it")
        }
        guard info.st_mode & S_IWGRP == 0 else {
            throw SegmentsError(
                .storage, "The storage directory is writable by its group; refusing to use it (make it owner-only: chmod 700)")
        }
    }

    /// A storage error about the directory: the system's reason, never the path (it may contain
    /// an integration id).
    private static func directoryFailure(_ operation: String, code: Int32) -> SegmentsError {
        let reason = String(cString: strerror(code))
        return SegmentsError(
            .storage, "Could not \(operation) the storage directory: \(reason)", underlying: SystemCallError(code: code))
    }

    private static func makeDirectory(_ path: String) throws {
        if mkdir(path, POSIXFile.directoryMode) == 0 {
            // The umask may have removed bits from the mode; set it exactly.
            _ = chmod(path, POSIXFile.directoryMode)
            FileProtection.protectUntilFirstUnlock(directory: path)  // see Behaviour P8
            return
        }
        let code = errno
        switch code {
        case EEXIST:
            var info = stat()
            guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
                throw directoryFailure("create", code: ENOTDIR)
            }
        case ENOENT:
            let parent = (path as NSString).deletingLastPathComponent
            guard !parent.isEmpty, parent != path else { throw directoryFailure("create", code: code) }
            try makeDirectory(parent)
            try makeDirectory(path)
        default:
            throw directoryFailure("create", code: code)
        }
    }

    /// Replaces `name` with `data` atomically: a new owner-only temporary file in the same
    /// directory is written and synced, renamed over `name`, and the directory is synced. A crash
    /// at any point leaves either the old or the new content, plus at worst a stray temporary file.
    func replace(_ name: String, with data: Data) throws {
        try publish(writeTemporary(for: name, data), as: name)
        syncDirectory()
    }

    /// Writes `data` to a new owner-only temporary file for `name` and syncs it; returns its path.
    /// The first half of ``replace(_:with:)``, for a caller that adds to the file before
    /// publishing it with ``publish(_:as:)``.
    func writeTemporary(for name: String, _ data: Data) throws -> String {
        if let code = simulatedWriteFailure?(name) {
            throw POSIXFile.failure("write", path(of: name), code: code)
        }
        let temporary = path(of: Self.temporaryPrefix(of: name) + UUID().uuidString)
        let fd = try POSIXFile.createExclusive(temporary)
        do {
            defer { POSIXFile.closeQuietly(fd) }
            try POSIXFile.writeAll(fd, data, path: temporary)
            try POSIXFile.sync(fd, path: temporary)
        } catch {
            POSIXFile.delete(temporary)
            throw error
        }
        return temporary
    }

    /// Renames a temporary file from ``writeTemporary(for:_:)`` over `name` (atomic). The directory
    /// is not synced here: call ``syncDirectory()`` after, outside any lock.
    func publish(_ temporary: String, as name: String) throws {
        do {
            try POSIXFile.move(temporary, over: path(of: name))
        } catch {
            POSIXFile.delete(temporary)
            throw error
        }
    }

    /// Makes renames in the directory durable (best effort).
    func syncDirectory() {
        POSIXFile.syncDirectory(path)
    }

    /// Deletes `name` durably; `true` when it is gone (or never existed). Needs no free space.
    func remove(_ name: String) -> Bool {
        let gone = unlink(path(of: name)) == 0 || errno == ENOENT
        POSIXFile.syncDirectory(path)
        return gone
    }

    /// Deletes the temporary files a crash left behind for `name`. They are never read: the
    /// rename that would have published them did not happen, so the target still holds the last
    /// complete content. Only `name`'s own temporaries are touched, never another store's
    /// write in progress.
    func removeStrayTemporaries(of name: String) {
        let prefix = Self.temporaryPrefix(of: name)
        for entry in entries() where entry.hasPrefix(prefix) {
            POSIXFile.delete(path(of: entry))
        }
    }

    /// Moves a damaged `name` out of the way as `<name>.corrupt-<n>` and returns that name, or
    /// `nil` when even that failed (the file is then deleted so start-up can go on).
    ///
    /// Set aside rather than deleted: the bytes may still hold queued events or ids that support
    /// can recover by hand. With `keepingOriginal`, the damaged file gets the second name by a hard
    /// link and stays in place, for a caller that replaces it atomically right after. With
    /// `contents`, the set-aside copy is a new file of those bytes (the part of the file that was
    /// damaged, without what this process wrote after it) and `name` stays in place.
    @discardableResult
    func setAside(_ name: String, keepingOriginal: Bool = false, contents: Data? = nil) -> String? {
        let prefix = name + ".corrupt-"
        // Only numbers this code could have written count: a planted `.corrupt-9223372036854775807`
        // would otherwise overflow the next number and crash every start.
        let numbers = entries().compactMap { entry -> Int? in
            guard entry.hasPrefix(prefix), let number = Int(entry.dropFirst(prefix.count)),
                (1...Self.largestCorruptNumber).contains(number)
            else { return nil }
            return number
        }
        let next = (numbers.max() ?? 0) + 1
        let asideName = prefix + String(next)
        var moved = true
        do {
            if let contents {
                try publish(writeTemporary(for: name, contents), as: asideName)
            } else if keepingOriginal {
                try POSIXFile.hardLink(path(of: name), to: path(of: asideName))
            } else {
                try POSIXFile.move(path(of: name), over: path(of: asideName))
            }
        } catch {
            moved = false
            if !keepingOriginal, contents == nil { POSIXFile.delete(path(of: name)) }
        }
        for old in numbers where old <= next - Self.keptCorruptCopies {
            POSIXFile.delete(path(of: prefix + String(old)))
        }
        POSIXFile.syncDirectory(path)
        return moved ? asideName : nil
    }

    /// The names in the directory; empty when it cannot be listed.
    private func entries() -> [String] {
        FileOperationLog.record(path) { $0.listings += 1 }
        return (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
    }

    /// Temporary files are hidden and named after their target, so they are easy to recognise.
    private static func temporaryPrefix(of name: String) -> String {
        "." + name + ".tmp-"
    }
}
