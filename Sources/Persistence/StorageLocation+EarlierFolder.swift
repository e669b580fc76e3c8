#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import SegmentsDomain

extension StorageLocation {
    /// What ``moveEarlierFolder(integrationId:in:)`` did.
    package enum EarlierFolderMove: Equatable, Sendable {
        /// There was nothing to move: no folder under the earlier name, the earlier name is the
        /// current one, or both names are one folder already.
        case nothingToMove
        /// The folder under the earlier name now has the current name.
        case moved
        /// Both names held a folder: the current one is kept, and the earlier one was renamed to
        /// the given name (which no integration id maps to), nothing in it deleted.
        case setAside(String)
        /// Another process holds the earlier folder's lock: it was left alone, to be moved at a
        /// later configure.
        case earlierFolderInUse
        /// The system refused (its `errno`); everything was left as it was.
        case failed(Int32)
    }

    /// The suffix of a folder set aside by ``moveEarlierFolder(integrationId:in:)``: `~` is never
    /// in a folder name the SDK makes, so no integration can ever take the set-aside folder as its
    /// own, on a case-insensitive volume either.
    package static let setAsideSuffix = "~superseded"

    /// The directory that holds the default folder of every integration.
    package static func defaultParentDirectory() -> URL {
        applicationDataDirectory().appendingPathComponent(sdkFolderName, isDirectory: true)
    }

    /// Gives the folder that earlier versions named `integrationId`'s folder (before the case
    /// rule of ``folderName(forIntegrationId:)``; <doc:Behaviour#P10>) its current name, in `parent`.
    ///
    /// - Only ids with upper-case letters changed names; for the others this does nothing.
    /// - The earlier folder is moved while this process holds its owner lock (<doc:Behaviour#P5>), so
    ///   a process still using it is never pulled from under, and two processes that migrate at once
    ///   move it once: the second finds it gone. The lock follows the folder to its new name and is
    ///   released before this returns.
    /// - When the current folder exists too, it is kept (it is what this version has been writing)
    ///   and the earlier one is renamed to `<earlier name>~superseded[-<n>]`, nothing deleted, so
    ///   support can recover it and, on a case-insensitive volume, its name no longer stands in
    ///   for the folder of an id that differs from it only in letter case.
    /// - A folder already at both names (one folder, by device and inode) is left as it is.
    @discardableResult
    package static func moveEarlierFolder(integrationId: String, in parent: URL) -> EarlierFolderMove {
        let earlier = parent.appendingPathComponent(earlierFolderName(forIntegrationId: integrationId), isDirectory: true)
        let current = parent.appendingPathComponent(folderName(forIntegrationId: integrationId), isDirectory: true)
        return moveEarlierFolder(earlier, to: current)
    }

    /// Moves the folder `earlier` to `current` as ``moveEarlierFolder(integrationId:in:)`` says;
    /// without `settingAside`, a folder at both names leaves both as they are (`.nothingToMove`).
    static func moveEarlierFolder(_ earlier: URL, to current: URL, settingAside: Bool = true) -> EarlierFolderMove {
        guard earlier.path != current.path, let identity = DirectoryIdentity.ofEntry(earlier.path) else { return .nothingToMove }
        guard DirectoryIdentity.of(current.path) != identity else { return .nothingToMove }
        let lock: StorageDirectoryLock
        do {
            // Not `creating`: a folder another process moved away meanwhile must not come back.
            lock = try StorageDirectoryLock.waitingOutMomentaryHolders { try StorageDirectoryLock.acquire(earlier, creating: false) }
        } catch {
            return DirectoryIdentity.ofEntry(earlier.path) == identity ? .earlierFolderInUse : .nothingToMove
        }
        defer { withExtendedLifetime(lock) {} }
        // Under the lock: another process may have moved it in the meantime.
        guard DirectoryIdentity.ofEntry(earlier.path) == identity else { return .nothingToMove }
        let parent = current.deletingLastPathComponent().path
        defer { POSIXFile.syncDirectory(parent) }
        if DirectoryIdentity.ofEntry(current.path) == nil {
            do {
                try POSIXFile.move(earlier.path, over: current.path)
                return .moved
            } catch {
                // ENOTEMPTY or EEXIST: another process made the current folder meanwhile; set the
                // earlier one aside below. Anything else: leave both as they are.
                let code = ((error as? SegmentsError)?.underlying as? SystemCallError)?.code ?? EIO
                guard DirectoryIdentity.ofEntry(current.path) != nil else { return .failed(code) }
            }
        }
        guard settingAside else { return .nothingToMove }
        return setAside(earlier)
    }

    /// Renames `earlier` to the first free `<name>~superseded[-<n>]` beside it.
    private static func setAside(_ earlier: URL) -> EarlierFolderMove {
        let base = earlier.lastPathComponent + setAsideSuffix
        for number in 1...100 {
            let name = number == 1 ? base : base + "-\(number)"
            let target = earlier.deletingLastPathComponent().appendingPathComponent(name, isDirectory: true).path
            var info = stat()
            guard lstat(target, &info) != 0 else { continue }
            do {
                try POSIXFile.move(earlier.path, over: target)
                return .setAside(name)
            } catch {
                return .failed(((error as? SegmentsError)?.underlying as? SystemCallError)?.code ?? EIO)
            }
        }
        return .failed(EEXIST)
    }
}
